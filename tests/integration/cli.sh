#!/bin/sh
# rezusctl as a user runs it, against the real daemon: login, apply the examples, get in
# every output format (JSON and YAML round-trip through apply -f), watch, scale, edit, the
# logs of a real sim run, a kubeconfig kubectl loads, the export (a directory plain
# terraform plans with no changes; 0700/0600, audited, 403 for a viewer), the state's
# history and a rollback,
# delete; errors and exit statuses for a bad manifest, a conflict, a missing object, a dead
# server, missing permissions and bad usage; events in get and describe (the engine's, and the empty forms); boot --platform local
# from nothing, twice; boot --platform docker with recording stand-ins for talosctl and
# kubectl; completion; the man page against --help.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
CTL="$top_builddir/rezusctl"
export HOME="$WORK/home"
mkdir -p "$HOME"
unset REZUSCLOUD_SERVER REZUSCLOUD_TOKEN KUBECONFIG
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $TF
  debounce: 200ms
  workers: 1
observe:
  fast_interval: 200ms
plugin_dir: $top_builddir/plugins
plugins:
  sim: {stageMs: 50}
  talos: {}
  oci: {}
  openstack: {}
  metal: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=cli-test-password start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
SERVER="http://127.0.0.1:$PORT"
# run ARGS...: rezusctl with stdout in $WORK/out, stderr in $WORK/err; sets RC.
run() { "$CTL" "$@" >"$WORK/out" 2>"$WORK/err"; RC=$?; }
# misaligned FILE: the lines of the table in FILE (its header first) whose cells do not start
# where the header's columns do: a blank before each column's start, and the cell starting
# there (or empty up to the next column); a line may end before a column (its last cells
# empty). Nothing when the table is aligned.
misaligned() {
	awk 'NR == 1 { n = 0; for (i = 2; i <= length($0); i++)
		if (substr($0, i - 1, 1) == " " && substr($0, i, 1) != " ") start[++n] = i
		start[n + 1] = 10000; next }
	{ for (k = 1; k <= n; k++) { p = start[k]; if (p > length($0)) break; cell = substr($0, p, start[k + 1] - p)
		if (substr($0, p - 1, 1) != " " || (cell ~ /^ / && cell !~ /^ *$/)) { print NR ": " $0; break } } }' "$1"
}


# --- login -------------------------------------------------------------------------------------
echo cli-test-password | "$CTL" login "$SERVER" --username admin --password-stdin >"$WORK/out" 2>"$WORK/err"
expect_eq "login with --password-stdin succeeds" "0" "$?"
CONF_FILE="$HOME/.config/rezus/config"
expect_eq "the config file is created 0600" "600" "$(stat -c %a "$CONF_FILE")"
expect_match "it holds an API token" 'token: rzt_' "$(cat "$CONF_FILE")"
expect_eq "and never the password" "0" "$(grep -c cli-test-password "$CONF_FILE")"
if command -v script >/dev/null; then
	# At a terminal: the name is asked with echo, the password without.
	(sleep 0.5; printf 'admin\n'; sleep 0.5; printf 'cli-test-password\n'; sleep 1) |
		script -qec "'$CTL' login '$SERVER' --context tty" /dev/null >"$WORK/tty.out" 2>&1
	expect_match "login at a terminal prompts for the name and the password" \
		'Username: admin.*Password: .*Logged in to .* as admin \(context tty\)' "$(tr -d '\r' <"$WORK/tty.out" | tr '\n' ' ')"
	expect_eq "and does not echo the password" "0" "$(grep -c cli-test-password "$WORK/tty.out")"
	"$CTL" config use-context default >/dev/null
fi
REZUSCLOUD_SERVER=http://127.0.0.1:1 "$CTL" get tenants >"$WORK/out" 2>"$WORK/err"
expect_match "REZUSCLOUD_SERVER overrides the context" '^error: cannot reach the server at http://127.0.0.1:1: ' "$(cat "$WORK/err")"
REZUSCLOUD_TOKEN=rzt_not-a-real-token "$CTL" get tenants >"$WORK/out" 2>"$WORK/err"
expect_eq "REZUSCLOUD_TOKEN overrides the context's token" "1" "$?"
run version
expect_match "version shows client and server" 'Client: rezusctl .*Server: rezuscloud ' "$(tr '\n' ' ' <"$WORK/out")"
run config set-context a-context-with-a-long-name --server http://rezus.example.invalid:8080
run config get-contexts
expect_match "config get-contexts lists the contexts" '^\* +default +http://127' "$(cat "$WORK/out")"
expect_eq "aligned, with a long name among them" "" "$(misaligned "$WORK/out")"
expect_eq "and no line ends in blanks (an empty TENANT is not padded)" "" "$(grep -n ' $' "$WORK/out")"

# --- apply, get --------------------------------------------------------------------------------
run apply -f "$top_srcdir/examples/metal"
expect_eq "apply -f DIR creates every object" \
	"tenant/rack created|nodegroup/cp created|nodegroup/workers created|configpatch/kubelet-certs created|" \
	"$(tr '\n' '|' <"$WORK/out")"
# A set with one bad document is not half-applied: every document is checked, then dry-run
# by the server, before any is written; the error names the file and the field.
mkdir -p "$WORK/halfset"
printf 'apiVersion: rezuscloud.io/v1\nkind: Tenant\nmetadata: {name: halfset}\nspec: {clusterProvider: sim}\n' \
	>"$WORK/halfset/a-tenant.yaml"
printf 'apiVersion: rezuscloud.io/v1\nkind: NodeGroup\nmetadata: {name: cp, tenant: halfset}\nspec: {role: controlplane, count: many, providerClass: sim}\n' \
	>"$WORK/halfset/b-bad.yaml"
run apply -f "$WORK/halfset"
expect_eq "apply -f DIR with a bad document fails" "1" "$RC"
expect_match "naming its file and field" "^error: $WORK/halfset/b-bad.yaml: .*spec.count" "$(cat "$WORK/err")"
run get tenant halfset
expect_eq "and creates nothing, not even the good one" "1" "$RC"
printf 'apiVersion: rezuscloud.io/v1\nkind: Gadget\nmetadata: {name: g}\n' >"$WORK/halfset/b-bad.yaml"
run apply -f "$WORK/halfset"
expect_match "an unknown kind is named with its file, before anything is sent" \
	"^1 error: $WORK/halfset/b-bad.yaml: kind \"Gadget\" is not one rezusctl knows" "$RC $(cat "$WORK/err")"
run get tenant halfset
expect_eq "and creates nothing either" "1" "$RC"
printf 'apiVersion: rezus.io/v1\nkind: Cluster\nmetadata: {name: old}\n' >"$WORK/cluster.yaml"
run apply -f "$WORK/cluster.yaml"
expect_match "the original's kind: Cluster is refused, naming what it is here" \
	'kind "Cluster" is not one rezusctl knows: it is a Tenant \(and its NodeGroups\) here \(docs/migration.md\)' \
	"$(cat "$WORK/err")"
: >"$WORK/empty.yaml"
run apply -f "$WORK/empty.yaml"
expect_eq "apply -f of an empty file fails, saying so" "1 error: no objects passed to apply: $WORK/empty.yaml holds no manifest" \
	"$RC $(cat "$WORK/err")"
# A set's objects that name no tenant belong to its one Tenant (no -t given); a namespace
# that disagrees with metadata.tenant is named before anything is sent.
printf 'apiVersion: rezuscloud.io/v1\nkind: NodeGroup\nmetadata: {name: cp}\nspec: {role: controlplane, count: 0, providerClass: sim}\n' \
	>"$WORK/halfset/b-bad.yaml"
run apply -f "$WORK/halfset"
expect_eq "objects naming no tenant go to the set's one Tenant" "0 tenant/halfset created|nodegroup/cp created|" \
	"$RC $(tr '\n' '|' <"$WORK/out")"
run get ng cp -t halfset -o 'jsonpath={.metadata.tenant}'
expect_eq "in it" "halfset" "$(cat "$WORK/out")"
printf 'apiVersion: rezuscloud.io/v1\nkind: NodeGroup\nmetadata: {name: cp, tenant: halfset, namespace: rack}\nspec: {role: controlplane, count: 0, providerClass: sim}\n' \
	>"$WORK/halfset/b-bad.yaml"
run apply -f "$WORK/halfset"
expect_match "tenant and namespace must agree" "^1 error: $WORK/halfset/b-bad.yaml: nodegroup/cp: metadata.namespace \(rack\) does not match metadata.tenant \(halfset\)" \
	"$RC $(cat "$WORK/err")"
run delete tenant halfset
run apply -f "$top_srcdir/examples/metal/1-tenant.yaml" -f "$top_srcdir/examples/metal/3-workers.yaml"
expect_eq "applying them again changes nothing" "tenant/rack unchanged|nodegroup/workers unchanged|" "$(tr '\n' '|' <"$WORK/out")"
sed 's/^  namespace: rack$/  namespace: rack\n  labels: {tier: gold}/' "$top_srcdir/examples/metal/3-workers.yaml" >"$WORK/workers.yaml"
run apply -f "$WORK/workers.yaml"
expect_eq "a changed manifest is configured" "nodegroup/workers configured" "$(cat "$WORK/out" "$WORK/err")"
cat "$top_srcdir/examples/oci/1-tenant.yaml" | "$CTL" apply -f - >"$WORK/out" 2>&1
expect_eq "apply -f - reads stdin" "tenant/oci-demo created" "$(cat "$WORK/out")"

# --dry-run writes nothing: server (alone too) sends ?dryRun=All, client sends no write;
# what it would do is said kubectl's way. A writing command without a dry run refuses it.
printf 'apiVersion: rezuscloud.io/v1\nkind: Tenant\nmetadata: {name: dry}\nspec: {clusterProvider: sim}\n' >"$WORK/dry.yaml"
sed 's/^  namespace: rack$/  namespace: rack\n  labels: {dry: run}/' "$top_srcdir/examples/metal/3-workers.yaml" >"$WORK/dry-workers.yaml"
for flag in --dry-run --dry-run=server; do
	run apply $flag -f "$WORK/dry.yaml" -f "$WORK/dry-workers.yaml"
	expect_eq "apply $flag says what it would do, checked by the server" \
		"0 tenant/dry created (server dry run)|nodegroup/workers configured (server dry run)|" \
		"$RC $(tr '\n' '|' <"$WORK/out")"
done
run apply --dry-run=client -f "$WORK/dry.yaml" -f "$WORK/dry-workers.yaml"
expect_eq "apply --dry-run=client too, from what the client reads" \
	"0 tenant/dry created (dry run)|nodegroup/workers configured (dry run)|" "$RC $(tr '\n' '|' <"$WORK/out")"
run create --dry-run -f "$WORK/dry.yaml"
expect_eq "create --dry-run" "0 tenant/dry created (server dry run)" "$RC $(cat "$WORK/out")"
run create --dry-run=client -f "$WORK/dry.yaml"
expect_eq "create --dry-run=client" "0 tenant/dry created (dry run)" "$RC $(cat "$WORK/out")"
run get tenant dry
expect_eq "none of them created the tenant" "1" "$RC"
run apply --dry-run=none -f "$top_srcdir/examples/metal/1-tenant.yaml"
expect_eq "--dry-run=none is a plain apply" "0 tenant/rack unchanged" "$RC $(cat "$WORK/out")"
run delete tenant rack --dry-run
expect_eq "delete --dry-run" "0 tenant/rack deleted (server dry run)" "$RC $(cat "$WORK/out")"
run delete ng workers -t rack --dry-run=client
expect_eq "delete --dry-run=client" "0 nodegroup/workers deleted (dry run)" "$RC $(cat "$WORK/out")"
run delete -f "$top_srcdir/examples/metal/3-workers.yaml" --dry-run=server
expect_eq "delete -f --dry-run=server" "0 nodegroup/workers deleted (server dry run)" "$RC $(cat "$WORK/out")"
run delete ng nope -t rack --dry-run=client
expect_eq "delete --dry-run=client of none is an error" '1 error: nodegroups "nope" not found' "$RC $(cat "$WORK/err")"
run get tenant rack -o 'jsonpath={.metadata.name} {.metadata.deletionTimestamp}'
expect_eq "the tenant is still there, not being deleted" "0 rack " "$RC $(cat "$WORK/out")"
run get ng workers -t rack -o 'jsonpath={.metadata.labels}'
expect_eq "its workers too, their labels unchanged" '0 {"tier":"gold"}' "$RC $(cat "$WORK/out")"
run apply --dry-run=bogus -f "$WORK/dry.yaml"
expect_match "a bad --dry-run value is a usage error naming the values" '^2 rezusctl: --dry-run=bogus: use none, server or client' \
	"$RC $(cat "$WORK/err")"
# (manual runs counted: a run of an earlier change may still start meanwhile)
manual_runs() { "$CTL" get runs -t rack -o json | python3 -c 'import json,sys; print(sum(1 for i in json.load(sys.stdin)["items"] if i["spec"].get("trigger") == "manual"))'; }
runs_before=$(manual_runs)
run plan rack --dry-run
expect_match "a writing command without a dry run refuses --dry-run" '^2 rezusctl: plan: --dry-run is not supported' "$RC $(cat "$WORK/err")"
expect_eq "and starts nothing" "$runs_before" "$(manual_runs)"
run upgrade rack --talos 1.12.1 --dry-run=client
expect_match "upgrade's prechecks are the server's: --dry-run=client is refused" '^2 .*use --dry-run' "$RC $(cat "$WORK/err")"

run get tenants
expect_match "get tenants is a kubectl-like table" '^NAME +PROVIDER +PHASE +MACHINES +KUBERNETES +AGE$' "$(head -n 1 "$WORK/out")"
expect_match "with a humanised age" '^oci-demo +talos .* [0-9]+s$' "$(grep '^oci-demo' "$WORK/out")"
run get ng -t rack -o wide
expect_match "-o wide adds columns" '^NAME +ROLE +CLASS +DESIRED +READY +AGE +TOTAL$' "$(head -n 1 "$WORK/out")"
run get nodegroups -A
expect_match "-A lists every tenant's, with a TENANT column" '^workers +rack +worker +metal +2 ' "$(grep '^workers' "$WORK/out")"
run get ng -t rack -o name
expect_eq "-o name" "nodegroup/cp|nodegroup/workers|" "$(tr '\n' '|' <"$WORK/out")"
run get ng -t rack -o 'jsonpath={.items[*].metadata.name}'
expect_eq "-o jsonpath={.items[*].metadata.name} (kubectl's syntax)" "0 cp workers" "$RC $(cat "$WORK/out")"
run get ng -t rack -o 'jsonpath={range .items[*]}{.metadata.name}={.spec.role}{"\n"}{end}'
expect_eq "-o jsonpath with range, literal text and newlines" "cp=controlplane|workers=worker|" "$(tr '\n' '|' <"$WORK/out")"
run get ng workers -t rack -o 'jsonpath=count: {.spec.count}\n'
expect_eq "-o jsonpath of one object, with \\n in the text" "count: 2|" "$(tr '\n' '|' <"$WORK/out")"
run get ng -t rack -o 'jsonpath={.items[0].spec.providerConfig.machines[*].address}'
expect_match "-o jsonpath indexes lists" '^10\.10\.0\.11' "$(cat "$WORK/out")"
run get ng -t rack -o 'jsonpath={range .items[*]}'
expect_eq "a range without end is a usage error" "2" "$RC"
run get ng -t rack -o custom-columns=NAME:.metadata.name,ROLE:.spec.role,ZONE:.metadata.labels.nothing
expect_eq "-o custom-columns=NAME:.metadata.name,... (aligned, <none> when missing)" \
	"NAME      ROLE           ZONE|cp        controlplane   <none>|workers   worker         <none>|" \
	"$(tr '\n' '|' <"$WORK/out")"
run get ng/workers -t rack -o json
expect_match "-o json of one object is the object" '"kind": "NodeGroup"' "$(cat "$WORK/out")"
cp "$WORK/out" "$WORK/workers.json"
run apply -f "$WORK/workers.json"
expect_eq "JSON output round-trips through apply -f" "nodegroup/workers unchanged" "$(cat "$WORK/out")"
run get ng -t rack -o yaml
expect_match "-o yaml is a List" '^kind: List$' "$(cat "$WORK/out")"
cp "$WORK/out" "$WORK/ngs.yaml"
run apply -f "$WORK/ngs.yaml"
expect_eq "YAML output round-trips through apply -f" "nodegroup/cp unchanged|nodegroup/workers unchanged|" "$(tr '\n' '|' <"$WORK/out")"
printf 'apiVersion: rezuscloud.io/v1\nkind: ConfigPatch\nmetadata: {name: noted, namespace: rack, annotations: {note: "owner: ops", star: "*all"}}\nspec: {patch: "machine: {}"}\n' >"$WORK/noted.yaml"
run apply -f "$WORK/noted.yaml"
run get cp noted -t rack -o yaml
expect_eq "-o yaml quotes what must be quoted with no ! tag" "note: 'owner: ops'|star: '*all'|patch: 'machine: {}'|" \
	"$(grep -E '^ *(note|star|patch):' "$WORK/out" | sed 's/^ *//' | tr '\n' '|')"
run delete cp noted -t rack
run get ng -t rack -l tier=gold -o name
expect_eq "-l selects by label" "nodegroup/workers" "$(cat "$WORK/out")"
run describe tenant rack
expect_match "describe shows the object, its node groups and runs" 'Name: +rack.*Node groups:.*workers +worker +metal.*Recent runs:' "$(tr '\n' ' ' <"$WORK/out")"
run api-resources
expect_match "api-resources comes from the server's kind table" '^nodegroups +ng +true +NodeGroup ' "$(grep '^nodegroups' "$WORK/out")"
expect_match "api-resources columns are set apart like every table's (the one printer)" \
	'^NAME {3,}SHORTNAMES {3,}TENANT-SCOPED {3,}KIND {3,}VERBS$' "$(head -n 1 "$WORK/out")"
# the start of each of the five columns, on every line that has all five
starts=$(awk 'NF == 5 { s = $0; off = 0; out = ""
	for (i = 1; i <= NF; i++) { match(s, /[^ ]+/); off += RSTART; out = out " " off; off += RLENGTH - 1; s = substr(s, RSTART + RLENGTH) }
	print out }' "$WORK/out")
expect_eq "api-resources columns are aligned (each column starts at one offset on every line)" "1 1 1 1 1 " \
	"$(for f in 2 3 4 5 6; do printf '%s\n' "$starts" | cut -d' ' -f$f | sort -u | wc -l; done | tr '\n' ' ')"

# --- events: the engine records its runs; the empty forms through a selector nothing matches --
NONE="--field-selector reason=NoSuchReason"
run get events -t rack $NONE
expect_eq "get events with none to show says so on stderr, exit 0" "0||No resources found." "$RC|$(cat "$WORK/out")|$(cat "$WORK/err")"
run get ev -A -o name $NONE
expect_eq "get ev -A (short name, every tenant) -o name prints nothing" "0|" "$RC|$(cat "$WORK/out")"
run get events -t rack -o json $NONE
expect_match "-o json of no events is an empty List" '"kind": "List".*"items": \[\]' "$(tr '\n' ' ' <"$WORK/out")"
run get events -t rack -o yaml $NONE
expect_match "-o yaml too" '^items: \[\]$' "$(cat "$WORK/out")"
for _ in $(seq 1 100); do
	"$CTL" get events -t rack 2>/dev/null | grep -q RunStarted && break
	sleep 0.1
done
run get events -t rack
# (the events of one reason are counted in one row showing the newest run's trigger: on a
# loaded machine the resync may already have started one)
expect_match "get events lists what the engine recorded, in kubectl's columns" \
	'^LAST SEEN +TYPE +REASON +OBJECT +COUNT +MESSAGE.*Normal +RunStarted +tenant/rack +[0-9]+ +run run-[0-9a-f]+ \(apply, (create|update|resync)\): started' \
	"$(tr '\n' ' ' <"$WORK/out")"
run get events -t rack --field-selector involvedObject.kind=NodeGroup,involvedObject.name=workers
expect_eq "--field-selector on involvedObject is accepted" "0" "$RC"
run get events -t rack --field-selector spec.count=1
expect_eq "a field events cannot be selected by exits 1" "1" "$RC"
expect_match "naming the field and the ones that work" "field 'spec.count' is not supported \\(use .*involvedObject.name" "$(cat "$WORK/err")"
run get event nope -t rack
expect_eq "a missing event exits 1" "1 error: events \"nope\" not found" "$RC $(cat "$WORK/err")"
run describe tenant rack
expect_match "describe ends with the object's events" 'Recent runs:.* Events: +TYPE +REASON +AGE +FROM +MESSAGE .*Normal +RunStarted .* engine ' "$(tr '\n' ' ' <"$WORK/out")"
run describe ng workers -t rack
expect_match "for a node group too (it has none: <none>)" 'Machines:.* Events: +<none> *$' "$(tr '\n' ' ' <"$WORK/out")"
run api-resources
expect_match "api-resources lists events" '^events +ev +true +Event ' "$(grep '^events' "$WORK/out")"

# --- watch, scale, edit -------------------------------------------------------------------------
"$CTL" get tenants -w >"$WORK/watch.out" 2>&1 &
WATCH=$!
sleep 0.5
"$CTL" apply -f "$top_srcdir/examples/openstack/1-tenant.yaml" >/dev/null 2>&1
for _ in $(seq 1 50); do
	grep -q '^os-demo' "$WORK/watch.out" && break
	sleep 0.1
done
kill "$WATCH" 2>/dev/null
wait "$WATCH" 2>/dev/null
expect_match "get -w prints a tenant created while it watches" '^os-demo +talos' "$(cat "$WORK/watch.out")"
run scale nodegroup workers -t rack --replicas 3
expect_eq "scale past a metal group's machine list is refused (exit 1)" "1" "$RC"
expect_match "saying why" 'lists 2 machines but spec.count is 3' "$(cat "$WORK/err")"
cat >"$WORK/editor" <<'SH'
#!/bin/sh
# A scripted editor: first a change the server refuses, then, seeing why, a good one.
if grep -q '^# .* refused' "$1"; then
	sed -i 's/^  count: -1$/  count: 1/; s/^  name: cp$/  name: cp\n  annotations: {reviewed: "yes"}/' "$1"
else
	sed -i 's/^  count: 1$/  count: -1/' "$1"
fi
SH
chmod +x "$WORK/editor"
EDITOR="$WORK/editor" "$CTL" edit nodegroup cp -t rack >"$WORK/out" 2>"$WORK/err"
expect_eq "edit reopens a refused change with the reason, then sends the fix" "0 nodegroup/cp edited" "$? $(cat "$WORK/out")"
# A mistake in the YAML keeps the edits (kubectl's way): the editor opens again on the
# edited text itself (a comment of the user's too), the error in '#' lines on top.
cat >"$WORK/editor-yaml" <<'SH'
#!/bin/sh
# first: a label, a comment and a YAML mistake; then, shown why, the mistake fixed
n=$(ls "$SEEN" | wc -l)
cp "$1" "$SEEN/seen.$n"
if grep -q '^# .* refused' "$1"; then
	sed -i 's/^  count: \[1$/  count: 1/' "$1"
else
	sed -i 's/^  count: 1$/  # two, once the rack is full\n  count: [1/; s/^  name: cp$/  name: cp\n  labels: {edited: by-hand}/' "$1"
fi
SH
chmod +x "$WORK/editor-yaml"
mkdir -p "$WORK/edit" "$WORK/seen"
SEEN="$WORK/seen" TMPDIR="$WORK/edit" EDITOR="$WORK/editor-yaml" "$CTL" edit nodegroup cp -t rack >"$WORK/out" 2>"$WORK/err"
expect_eq "edit with a YAML mistake, then the fix, sends the edit" "0 nodegroup/cp edited" "$? $(cat "$WORK/out")"
expect_match "the editor opened again with the error on top, in '#' lines" \
	'^# .*refused.*: #   .*(flow|sequence|expected)' "$(grep '^#' "$WORK/seen/seen.1" | tr '\n' ' ' | sed 's/.*\(# The edit\)/\1/')"
expect_eq "and the edited text below it, the user's comment too" \
	"  labels: {edited: by-hand}|  # two, once the rack is full|  count: [1|" \
	"$(grep -e 'edited: by-hand' -e 'once the rack' -e '^  count:' "$WORK/seen/seen.1" | tr '\n' '|')"
expect_eq "the label reached the server" "by-hand" "$("$CTL" get ng cp -t rack -o 'jsonpath={.metadata.labels.edited}')"
expect_eq "and the temporary file is gone" "" "$(ls "$WORK/edit")"
cat >"$WORK/editor2" <<'SH'
#!/bin/sh
sed -i 's/^  count: 1$/  count: -1/' "$1"
SH
chmod +x "$WORK/editor2"
TMPDIR="$WORK/edit" EDITOR="$WORK/editor2" "$CTL" edit nodegroup cp -t rack >"$WORK/out" 2>"$WORK/err"
expect_eq "an edit the user gives up on (saved unchanged after a refusal) exits 1" "1" "$?"
expect_match "naming the refusal" 'edit abandoned: .*spec.count' "$(cat "$WORK/err")"
COPY=$(sed -n 's/^A copy of your changes has been stored to "\(.*\)"$/\1/p' "$WORK/err")
expect_match "and where a copy of the changes is kept" "^$WORK/edit/rezusctl-edit-.*\\.yaml$" "$COPY"
expect_match "which holds them, below the reason" '^#   spec.count: .* +count: -1 $' \
	"$(grep -e '^#   spec.count' -e '^  count:' "$COPY" 2>&1 | tr '\n' ' ')"
rm -f "$COPY"
cat >"$WORK/editor3" <<'SH'
#!/bin/sh
# a refused change, then an empty file
if grep -q '^# .* refused' "$1"; then : >"$1"; else sed -i 's/^  count: 1$/  count: -1/' "$1"; fi
SH
chmod +x "$WORK/editor3"
TMPDIR="$WORK/edit" EDITOR="$WORK/editor3" "$CTL" edit nodegroup cp -t rack >"$WORK/out" 2>"$WORK/err"
rc=$?
COPY=$(sed -n 's/^A copy of your changes has been stored to "\(.*\)"$/\1/p' "$WORK/err")
expect_match "emptied after a refusal: exit 1, the edited text kept" "^1 edit abandoned .*  count: -1" \
	"$rc $(grep -o 'edit abandoned' "$WORK/err") $(cat "$COPY" 2>&1 | tr '\n' ' ')"
rm -f "$COPY"
expect_eq "the node group is as it was" "1" "$("$CTL" get ng cp -t rack -o 'jsonpath={.spec.count}')"

# --- a real sim run: logs, plan, kubeconfig ------------------------------------------------------
cat >"$WORK/sim.yaml" <<'YAML'
apiVersion: rezuscloud.io/v1
kind: Tenant
metadata: {name: simmy}
spec: {clusterProvider: sim}
---
apiVersion: rezuscloud.io/v1
kind: NodeGroup
metadata: {name: cp, tenant: simmy}
spec: {role: controlplane, count: 1, providerClass: sim}
YAML
run apply -f "$WORK/sim.yaml"
for _ in $(seq 1 300); do
	"$CTL" get tenant simmy -o json 2>/dev/null | grep -q '"phase": "Ready"' && break
	sleep 0.1
done
run describe tenant simmy
sed -n '/^Conditions:$/,/^[^ ]/{/^  /s/^  //p}' "$WORK/out" >"$WORK/conds"
expect_match "describe's conditions include a long type" '^ControlPlaneReady ' "$(cat "$WORK/conds")"
expect_eq "and are aligned (the one table printer)" "" "$(misaligned "$WORK/conds")"
# -o jsonpath's filters and slices, on a real object's conditions; the same as kubectl's
# (which reads the object from a file with annotate --local) where kubectl is installed
run get tenant simmy -o 'jsonpath={.status.conditions[?(@.type=="ControlPlaneReady")].reason}'
expect_eq "-o jsonpath filters a list: [?(@.type==\"ControlPlaneReady\")]" "0 Healthy" "$RC $(cat "$WORK/out")"
run get tenant simmy -o 'jsonpath={$.status.conditions[-1].type} {.status.conditions[?(@.type!="Reconciled")].type}'
expect_eq "a leading \$, a negative index, !=" "0 Ready MachinesReady ControlPlaneReady Ready" "$RC $(cat "$WORK/out")"
run get tenant simmy -o 'jsonpath={.status.conditions[0:2].type}|{.status.conditions[?(@.nothing)].type}|{.status.conditions[?(@.observedGeneration==1)].reason}'
expect_eq "slices, existence, numbers" "0 Reconciled MachinesReady||Applied AllReady Healthy Ready" "$RC $(cat "$WORK/out")"
for e in '{.status.conditions[x].type}' '{..type}' '{.status.conditions[?(@.type<"x")].type}' '{.status.conditions[0,1]}'; do
	run get tenant simmy -o "jsonpath=$e"
	expect_match "an expression rezusctl does not read is a usage error naming it: $e" \
		"^2 rezusctl: jsonpath: \\{[^ ]*\\}: " "$RC $(cat "$WORK/err")"
done
run get tenant simmy -o 'jsonpath={.status.conditions[5].type}'
expect_match "an index out of range is an error, as kubectl's" '^1 error: jsonpath: .*out of bounds' "$RC $(cat "$WORK/err")"
if command -v kubectl >/dev/null; then
	"$CTL" get tenant simmy -o json >"$WORK/simmy.json"
	while IFS= read -r e; do
		want=$(KUBECONFIG=/dev/null kubectl annotate --local -f "$WORK/simmy.json" rezus-test=1 -o "jsonpath=$e" 2>&1)
		expect_eq "jsonpath $(printf '%s' "$e" | tr -d '\\') prints what kubectl's does" "$want" "$("$CTL" get tenant simmy -o "jsonpath=$e" 2>&1)"
	done <<'EXPR'
{.status.conditions[?(@.type=="ControlPlaneReady")].status}
{.status.conditions[?(@.type!='Reconciled')].reason}
{.status.conditions[?(@.message)].type}
{.status.conditions[?(@.observedGeneration!=1)].type}
{.status.conditions[-2:].type}
{.status.conditions[::2].type}
{.status.conditions[1:1].type}
{range .status.conditions[?(@.status=="True")]}{.type}={.reason}{"\n"}{end}
{.status.conditions[?(@.type=="Reconciled")]}
{$.spec.podSubnets[0]}
EXPR
fi
RUN=$("$CTL" runs simmy -o name | head -n 1 | sed 's|run/||')
expect_match "runs lists the tenant's run" '^run-' "$RUN"
run describe run "$RUN" -t simmy
"$CTL" get tenant simmy -o yaml >"$WORK/simmy.yaml"
"$CTL" get run "$RUN" -t simmy -o yaml >"$WORK/run.yaml"
"$CTL" get machines -t simmy -o yaml >"$WORK/machines.yaml"
expect_eq "-o yaml of the tenant shows its last run and control plane" "lastRun:|controlPlane:|" \
	"$(grep -o -E '^  (lastRun|controlPlane):' "$WORK/simmy.yaml" | sed 's/^ *//' | tr '\n' '|')"
expect_eq "with no empty error fields, nor the machines, nor the run (no error is no field)" "0" \
	"$(cat "$WORK/simmy.yaml" "$WORK/machines.yaml" "$WORK/run.yaml" | grep -c -E '^ *(error|lastError): ""$|^  message: ""$')"
expect_match "describe run shows its status and the end of its log" \
	'Kind: +Run.*phase: Succeeded.*Log \(last lines.*Apply complete! Resources' "$(tr '\n' ' ' <"$WORK/out")"
expect_match "describe run: Runner - (the daemon's own pool ran it)" '^Runner: +-$' "$(cat "$WORK/out")"
run get runs "$RUN" -t simmy
expect_match "get runs has a RUNNER column, - for the daemon's own pool" \
	'^NAME +OPERATION +TRIGGER +PHASE +CHANGES +RUNNER +AGE .*'"$RUN"' +[a-z]+ +[a-z]+ +Succeeded +\+[0-9]+ ~[0-9]+ -[0-9]+ +- +[0-9]' "$(tr '\n' ' ' <"$WORK/out")"
run logs "$RUN" -t simmy
expect_match "logs prints the run's tofu output" '^Apply complete! Resources: ' "$(cat "$WORK/out")"
run logs "$RUN" -f
expect_eq "logs -f of a finished run (tenant found by itself) ends with its phase, exit 0" "0 run $RUN: Succeeded" "$RC $(cat "$WORK/err")"
run plan simmy
PLAN=$(sed -n 's|^run/\(run-[0-9a-z]*\) created.*|\1|p' "$WORK/out")
expect_match "plan starts a plan run" '^run-' "$PLAN"
run logs "$PLAN" -t simmy -f
expect_match "logs -f follows it live until it ends" 'Plan: [0-9]+ to add.*run '"$PLAN"': Succeeded' "$(cat "$WORK/out" "$WORK/err" | tr '\n' ' ')"
# reconcile: an apply run by hand, as POST .../runs with spec.operation apply starts one
run reconcile tenant/simmy
RECON=$(sed -n 's|^run/\(run-[0-9a-z]*\) created (apply; follow it with: rezusctl logs \1 -f -t simmy)$|\1|p' "$WORK/out")
expect_match "reconcile starts an apply run, saying how to follow it" '^0 run-[0-9a-z]+$' "$RC $RECON"
expect_eq "a manual one" "apply manual" "$("$CTL" get run "$RECON" -t simmy -o 'jsonpath={.spec.operation} {.spec.trigger}')"
run logs "$RECON" -t simmy -f
expect_match "which runs to its end (its plan finds nothing to change here)" 'Plan: 0 to add, 0 to change, 0 to destroy.*run '"$RECON"': Succeeded' \
	"$(cat "$WORK/out" "$WORK/err" | tr '\n' ' ')"
run reconcile
expect_eq "reconcile without a tenant is a usage error" "2" "$RC"
run kubeconfig simmy -o "$WORK/kc"
expect_eq "kubeconfig -o FILE writes it 0600" "0 600" "$RC $(stat -c %a "$WORK/kc")"
(cd "$WORK" && "$CTL" kubeconfig simmy -o json >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
expect_match "kubeconfig -o json is taken for a format mistake, not a file named json" \
	"^2 [^ ]*: kubeconfig: -o names the FILE to write.*give \./json no-file$" \
	"$(cat "$WORK/rc") $(head -n 1 "$WORK/err") $([ -e "$WORK/json" ] && echo file || echo no-file)"
if command -v kubectl >/dev/null; then
	check "kubectl config view loads it" kubectl config view --kubeconfig "$WORK/kc"
	expect_eq "with the tenant's context" "admin@simmy" "$(kubectl config current-context --kubeconfig "$WORK/kc" 2>&1)"
	printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: other\n  cluster: {server: "https://other:6443"}\ncontexts: []\nusers: []\n' >"$WORK/kube-merge"
	KUBECONFIG="$WORK/kube-merge" "$CTL" kubeconfig simmy --merge >"$WORK/out" 2>&1
	expect_eq "--merge keeps the other clusters and switches to the tenant" "admin@simmy|other simmy" \
		"$(KUBECONFIG="$WORK/kube-merge" kubectl config current-context)|$(KUBECONFIG="$WORK/kube-merge" kubectl config get-clusters | tail -n +2 | sort | tr '\n' ' ' | sed 's/ $//')"
fi
# --- export: a way out, plain terraform carries on with the tenant --------------------------------
run export simmy "$WORK/export"
expect_match "export writes the tenant into DIR, exit 0" "^0 tenant/simmy exported to $WORK/export \\([0-9]+ files, backend local\\)" \
	"$RC $(head -n 1 "$WORK/out")"
expect_match "warning on stderr that DIR holds secrets" "^warning: $WORK/export holds secrets" "$(cat "$WORK/err")"
expect_eq "the directory is 0700" "700" "$(stat -c %a "$WORK/export")"
expect_eq "every file in it 0600" "" "$(find "$WORK/export" -type f ! -perm 600)"
expect_eq "the configuration, the state, the credentials and a README" \
	"README.md kubeconfig sim.tf.json talosconfig terraform.tfstate terraform.tfvars.json variables.tf.json versions.tf.json " \
	"$(ls "$WORK/export" | tr '\n' ' ')"
expect_match "with a local backend" '"backend": \{ *"local": \{ *"path": "terraform.tfstate" *\} *\}' \
	"$(tr -d '\n' <"$WORK/export/versions.tf.json")"
expect_eq "and none of the daemon's backend: no http block, address, user or CA" "" \
	"$(grep -l -e '"http"' -e '/tfstate/' -e "127.0.0.1:$PORT" -e '"username"' -e 'client_ca_certificate' "$WORK/export"/*.tf.json)"
expect_eq "its kubeconfig is the tenant's" "$(cat "$WORK/kc")" "$(cat "$WORK/export/kubeconfig")"
expect_match "the README says how to carry on with plain tofu" 'tofu init.*tofu plan.*rezusctl delete tenant simmy' \
	"$(tr '\n' ' ' <"$WORK/export/README.md")"
(cd "$WORK/export" && CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0 TF_CLI_CONFIG_FILE=/dev/null \
	"$TF" init -input=false -no-color >"$WORK/export.init" 2>&1)
expect_eq "$(basename "$TF") init there works offline" "0" "$?"
(cd "$WORK/export" && CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0 TF_CLI_CONFIG_FILE=/dev/null \
	"$TF" plan -input=false -no-color -detailed-exitcode >"$WORK/export.plan" 2>&1)
expect_eq "$(basename "$TF") plan -detailed-exitcode there: 0, no changes" "0 No changes." \
	"$? $(grep -o '^No changes\.' "$WORK/export.plan")"
ADMIN_TOKEN=$(sed -n 's/^ *token: \(rzt_.*\)$/\1/p' "$CONF_FILE" | head -n 1)
audited() { curl -s -H "Authorization: Bearer $ADMIN_TOKEN" "$SERVER/api/v1/audit?verb=export&tenant=simmy" | grep -o '"code":[0-9]*' | wc -l | tr -d ' '; }
expect_eq "the export is audited" "1" "$(audited)"
expect_match "naming the tenant and the action" '"user":"admin".*"verb":"export".*"kind":"Tenant".*"tenant":"simmy".*"code":200' \
	"$(curl -s -H "Authorization: Bearer $ADMIN_TOKEN" "$SERVER/api/v1/audit?verb=export&tenant=simmy")"
KTOKEN=$(sed -n 's/^ *token: *//p' "$WORK/kc")
expect_eq "never its contents: the cluster's secret is in no audit row, nor in the daemon's log" "0 0" \
	"$(curl -s -H "Authorization: Bearer $ADMIN_TOKEN" "$SERVER/api/v1/audit?tenant=simmy" | grep -c -F "$KTOKEN") $(grep -c -F "$KTOKEN" "$WORK/daemon.log")"
run export simmy "$WORK/export"
expect_match "a DIR that is not empty is refused, exit 1" "^1 error: $WORK/export is not empty: .*--force" "$RC $(cat "$WORK/err")"
expect_eq "before anything is asked of the server (nothing exported, nothing audited)" "1" "$(audited)"
echo stale >"$WORK/export/README.md"
run export simmy "$WORK/export" --force
expect_eq "--force writes over the files of the same names" "0 # Tenant simmy, exported from RezusCloud" \
	"$RC $(head -n 1 "$WORK/export/README.md")"
run export simmy "$WORK/export-s3" --backend s3
expect_eq "--backend s3 names that backend, an empty block for tofu init -backend-config" '0 {"s3":{}}' \
	"$RC $(tr -d ' \n' <"$WORK/export-s3/versions.tf.json" | sed 's/.*"backend":\({"s3":{}}\).*/\1/')"
run export simmy "$WORK/export-bad" --backend nfs
expect_match "an unknown backend is refused, naming the field" '^1 error: backend: .*backend: supported values: local, s3' \
	"$RC $(tr '\n' ' ' <"$WORK/err")"
expect_eq "and leaves no directory" "no" "$([ -e "$WORK/export-bad" ] && echo yes || echo no)"
run export simmy
expect_eq "export without DIR is a usage error" "2" "$RC"
for flag in --dry-run --dry-run=client; do
	run scale ng/cp -t simmy --replicas 2 $flag
	expect_match "scale $flag says it would" '^0 nodegroup/cp scaled \((server )?dry run\)$' "$RC $(cat "$WORK/out")"
done
expect_eq "and does not" "1" "$("$CTL" get ng cp -t simmy -o 'jsonpath={.spec.count}')"
run scale ng/cp -t simmy --replicas 2
expect_eq "scale sets the count" "nodegroup/cp scaled|2" "$(tr '\n' '|' <"$WORK/out")$("$CTL" get ng cp -t simmy -o json | sed -n 's/.*"count": \([0-9]*\).*/\1/p')"
# wait_total N: until simmy has N machines. scale_down: once cp has 2 machines, back to 1:
# a run that destroys one, awaiting approval, in WAITING.
wait_total() {
	for _ in $(seq 1 300); do
		[ "$("$CTL" get tenant simmy -o json | sed -n 's/.*"total": \([0-9]*\).*/\1/p' | head -n 1)" = "$1" ] && break
		sleep 0.1
	done
}
scale_down() {
	wait_total 2
	run scale ng/cp -t simmy --replicas 1
	WAITING=""
	for _ in $(seq 1 300); do
		WAITING=$("$CTL" runs simmy | awk '$4 == "AwaitingApproval" {print $1}' | head -n 1)
		[ -n "$WAITING" ] && break
		sleep 0.1
	done
}
scale_down
expect_match "scaling down shows a run awaiting approval" '^run-' "$WAITING"
run describe run "$WAITING" -t simmy
expect_match "describe run lists what the plan does, naming the Machine" \
	'Plan: +ACTION +ADDRESS +MACHINE +REASON +delete +terraform_data.cp\[1\] +cp-1 ' "$(tr '\n' ' ' <"$WORK/out")"
# At a terminal (stdin and stdout a pty) approve shows what the run would change and asks;
# only y or yes approves. at_tty ANSWER CMD...: what the terminal showed, then "exit N".
cat >"$WORK/at-tty.py" <<'PY'
import os, pty, sys, time
answer, cmd = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
seen, sent, end = b"", False, time.time() + 20
while time.time() < end:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
    if not sent and b"[y/N]" in seen:
        os.write(fd, answer.encode() + b"\n")
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace").replace("\r", ""))
print("exit %d" % os.waitstatus_to_exitcode(status))
PY
at_tty() { python3 "$WORK/at-tty.py" "$@" 2>&1 | tr '\n' ' '; }
expect_match "approve at a terminal shows what the run would add, change and destroy, then asks" \
	"^run/$WAITING \\(apply, tenant simmy\\) would add 0, change 0, destroy 1: +ACTION .* delete +terraform_data.cp\\[1\\] +cp-1 .*Approve\\? \\[y/N\\] +run/$WAITING not approved: it still awaits approval exit 1 $" \
	"$(at_tty '' "$CTL" approve "$WAITING" -t simmy)"
expect_match "no is no" "Approve\\? \\[y/N\\] no run/$WAITING not approved.* exit 1 $" "$(at_tty no "$CTL" approve "$WAITING" -t simmy)"
expect_eq "the run still awaits approval" "AwaitingApproval" "$("$CTL" get run "$WAITING" -t simmy -o 'jsonpath={.status.phase}')"
expect_match "yes approves it" "Approve\\? \\[y/N\\] yes run/$WAITING: run approved: it applies on the next free pool slot exit 0 $" \
	"$(at_tty yes "$CTL" approve "$WAITING" -t simmy)"
run logs "$WAITING" -f -t simmy
expect_eq "and it succeeds" "run $WAITING: Succeeded" "$(cat "$WORK/err")"
# not at a terminal (a script): approved at once, the summary on stderr
wait_total 1
run scale ng/cp -t simmy --replicas 2
scale_down
run approve "$WAITING" --reason "one control plane is enough here"
expect_eq "approve in a script approves at once, printing the result" \
	"0 run/$WAITING: run approved: it applies on the next free pool slot" "$RC $(cat "$WORK/out")"
expect_match "and what the run would change on stderr" \
	"^run/$WAITING \\(apply, tenant simmy\\) would add 0, change 0, destroy 1: +ACTION .* delete +terraform_data.cp\\[1\\] +cp-1 +delete_because_count_index $" \
	"$(tr '\n' ' ' <"$WORK/err")"
expect_match "with the reason kept in the Run" '"approvalReason": "one control plane is enough here"' \
	"$("$CTL" get run "$WAITING" -t simmy -o json)"
run logs "$WAITING" -f -t simmy
expect_eq "and it succeeds too" "run $WAITING: Succeeded" "$(cat "$WORK/err")"
run plan simmy
PLAN2=$(sed -n 's|^run/\(run-[0-9a-z]*\) created.*|\1|p' "$WORK/out")
run cancel "$PLAN2" -t simmy
expect_match "cancel stops a run (or says it already ended)" '^0 run/run-[0-9a-z]*: run canceled$|run .* is Succeeded' "$RC $(cat "$WORK/out" "$WORK/err")"
for _ in $(seq 1 100); do # the canceled plan's run may still be winding down
	run upgrade simmy --kubernetes 1.35.1
	grep -q 'NothingInProgress' "$WORK/err" || break
	sleep 0.1
done
expect_match "upgrade creates an UpgradeRun" '^upgrade/[a-z0-9-]* created$' "$(cat "$WORK/out" "$WORK/err")"
UPG=$(sed -n 's|^upgrade/\([a-z0-9-]*\) created$|\1|p' "$WORK/out")
for _ in $(seq 1 100); do
	VERS=$("$CTL" get up "$UPG" -t simmy -o 'jsonpath={.status.fromVersion} {.status.machines[*].from} {.status.machines[*].to} {.spec.targetVersion}' 2>&1)
	case "$VERS" in *" 1.35.1 "*) break ;; esac
	sleep 0.1
done
expect_eq "its versions in one form: from (the machines report v1.35.0) and to as spec and status write them" \
	"1.35.0 1.35.0 1.35.1 1.35.1" "$VERS"
run upgrade simmy
expect_eq "upgrade without a version is a usage error" "2" "$RC"
# watchers of tokens, one with the objects in a Table, one plain, see the new token
ADMIN_TOKEN=$(sed -n 's/^ *token: \(rzt_.*\)$/\1/p' "$CONF_FILE" | head -n 1)
curl -s -N -m 5 -H "Authorization: Bearer $ADMIN_TOKEN" \
	-H 'Accept: application/json;as=Table;g=meta.k8s.io;v=v1' \
	"$SERVER/api/v1/users/admin/tokens?watch=1&includeObject=Object&resourceVersion=0" >"$WORK/tokwatch.table" &
TW1=$!
curl -s -N -m 5 -H "Authorization: Bearer $ADMIN_TOKEN" \
	"$SERVER/api/v1/users/admin/tokens?watch=1" >"$WORK/tokwatch.json" &
TW2=$!
sleep 0.5
run token create --description "ci token"
SECRET=$(sed -n 's/^\(rzt_.*\)$/\1/p' "$WORK/out")
TOKID=$(sed -n 's|^token/\([a-z0-9-]*\) created.*|\1|p' "$WORK/out")
expect_match "token create shows the secret once" '^rzt_' "$SECRET"
for _ in $(seq 1 50); do
	grep -q "$TOKID" "$WORK/tokwatch.table" && grep -q "$TOKID" "$WORK/tokwatch.json" && break
	sleep 0.1
done
kill "$TW1" "$TW2" 2>/dev/null
wait "$TW1" "$TW2" 2>/dev/null
expect_eq "watchers of tokens (a Table with the objects, and plain) get the new token" "1 1" \
	"$(grep -c "\"$TOKID\"" "$WORK/tokwatch.table") $(grep -c "\"$TOKID\"" "$WORK/tokwatch.json")"
expect_eq "but never its secret" "0" "$(cat "$WORK/tokwatch.table" "$WORK/tokwatch.json" | grep -c -e "$SECRET" -e '"secret"')"
run get tenants --token "$SECRET" -o name
expect_match "the new token works" 'tenant/simmy' "$(cat "$WORK/out")"
run token list
expect_match "token list shows it" "^$TOKID +admin " "$(cat "$WORK/out")"
run token delete "$TOKID"
expect_eq "token delete revokes it" "token/$TOKID deleted" "$(cat "$WORK/out")"
run get tenants --token "$SECRET"
expect_eq "after which it fails" "1" "$RC"
expect_match "with a hint to log in" 'run .rezusctl login.' "$(cat "$WORK/err")"
run token create --expires 1h --description hour
HOURID=$(sed -n 's|^token/\([a-z0-9-]*\) created.*|\1|p' "$WORK/out")
expect_eq "token create --expires 1h takes a duration" "0" "$RC"
EXPIRES=$("$CTL" get token "$HOURID" -o json | sed -n 's/.*"expiresAt": "\([^"]*\)".*/\1/p')
LEFT=$(($(date -u -d "$EXPIRES" +%s 2>/dev/null || echo 0) - $(date -u +%s)))
expect_match "and the token expires in an hour (${LEFT} s)" '^3[5-6][0-9][0-9]$' "$LEFT"
run token create --expires 1d12h
expect_eq "days and compound durations too" "0" "$RC"
run token create --expires 5x
expect_match "a bad duration is a usage error naming the forms" '^2 .*--expires 5x: .*30s, 15m, 12h, 7d.*RFC 3339' \
	"$RC $(cat "$WORK/err")"
printf 'long-name-password-1\n' | "$CTL" user create a-user-with-a-rather-long-name --role view --password-stdin >/dev/null
run audit --limit 200
expect_match "audit shows the log" 'TIME +USER +VERB.*admin +login' "$(tr '\n' ' ' <"$WORK/out")"
expect_match "with a long name in it" ' a-user-with-a-rather-long-name ' "$(cat "$WORK/out")"
expect_eq "audit's columns are aligned (the one table printer)" "" "$(misaligned "$WORK/out")"
"$CTL" user delete a-user-with-a-rather-long-name >/dev/null
run backup create
expect_match "backup create takes one and names it" '^backup/backup-[0-9]{8}-[0-9]{6}-[0-9a-f]{4} created \(revision [0-9]+, [0-9]+ bytes\)$' "$(cat "$WORK/out")"
BACKUP=$(sed -n 's|^backup/\([^ ]*\) created.*|\1|p' "$WORK/out")
run backup list
expect_match "backup list shows it, with its state key kept separately" "^$BACKUP +manual +Completed +[0-9]+ +[0-9]+ +separate " "$(cat "$WORK/out")"
run backup get "backup/$BACKUP" -o json
expect_match "backup get -o json is its manifest" '"stateVersions": [0-9]+' "$(cat "$WORK/out")"
run backup get nope
expect_eq "backup get of none is an error" '1 error: backups "nope" not found' "$RC $(head -n 1 "$WORK/err")"
run talosconfig simmy
expect_match "talosconfig prints it" '^context: simmy' "$(cat "$WORK/out")"
# The state's history, and a rollback (admin).
run state list simmy
expect_match "state list shows the versions, newest first" \
	'^VERSION +SERIAL +LINEAGE +CREATED +RESOURCES\|[0-9]+ +[0-9]+ +[0-9a-f-]{36} +20[0-9-]{8}T[0-9:]{8}Z +[0-9]+\|[0-9]+ ' \
	"$(tr '\n' '|' <"$WORK/out")"
NEWEST=$(sed -n '2s/ .*//p' "$WORK/out")
OLDER=$(sed -n '3s/ .*//p' "$WORK/out")
OLDER_RES=$(sed -n '3s/.* //p' "$WORK/out")
run state list simmy -o json
expect_match "state list -o json is the server's list" '"kind": "StateVersionList"' "$(cat "$WORK/out")"
# (the upgrade's end starts a run, which holds the state's lock a moment: refused meanwhile,
# saying so; asked again then)
for _ in $(seq 1 100); do
	run state rollback simmy "$OLDER"
	[ "$RC" = 0 ] || ! grep -q 'is locked by' "$WORK/err" || { sleep 0.1; continue; }
	break
done
expect_eq "state rollback prints the server's message" "0 state rolled back to version $OLDER by admin" "$RC $(cat "$WORK/out")"
run state list simmy
expect_eq "the restored version is the newest, with the resources it held" "$((NEWEST + 1)) $OLDER_RES" \
	"$(sed -n '2s/ .*//p' "$WORK/out") $(sed -n '2s/.* //p' "$WORK/out")"
for _ in $(seq 1 100); do # (the rollback's own run may hold the lock a moment)
	run state rollback simmy 999999
	grep -q 'is locked by' "$WORK/err" || break
	sleep 0.1
done
expect_match "a version that is not there: exit 1, saying so" '^1 .*has no state version 999999' "$RC $(cat "$WORK/err")"
run state rollback simmy latest
expect_eq "a version that is not a number is a usage error" "2" "$RC"
run state
expect_eq "state without a verb is a usage error" "2" "$RC"

# --- errors and exit statuses ---------------------------------------------------------------------
printf 'apiVersion: rezuscloud.io/v1\nkind: NodeGroup\nmetadata: {name: bad, tenant: rack}\nspec: {role: boss, providerClass: metal}\n' >"$WORK/bad.yaml"
run apply -f "$WORK/bad.yaml"
expect_eq "a bad manifest exits 1" "1" "$RC"
expect_match "with the server's message and causes on stderr" 'error: [^ ]*bad.yaml: NodeGroup "bad" is invalid: .*spec.role' "$(cat "$WORK/err")"
# A List item without a kind crashed apply (found by fuzz/manifest.c).
printf '{"kind":"List","items":[{"metadata":{"name":"t"}}]}' >"$WORK/kindless.json"
run apply -f "$WORK/kindless.json"
expect_eq "a List item without a kind exits 1, saying which" \
	"1 error: $WORK/kindless.json: document 1: item 1 is not an object with a kind" \
	"$RC $(cat "$WORK/err")"
printf 'kind: List\nitems: [1]\n' >"$WORK/scalar.yaml"
run create -f "$WORK/scalar.yaml"
expect_eq "so does a List item that is not an object" "1" "$RC"
run create -f "$top_srcdir/examples/metal/1-tenant.yaml"
expect_eq "create of an existing object (a conflict) exits 1" "1" "$RC"
expect_match "saying it exists" 'already exists' "$(cat "$WORK/err")"
run get tenant nope
expect_eq "a missing object exits 1" "1 error: tenants \"nope\" not found" "$RC $(cat "$WORK/err")"
run get tenants --server http://127.0.0.1:1
expect_eq "a dead server is one line, exit 1" "1 1" "$RC $(wc -l <"$WORK/err" | tr -d ' ')"
expect_match "naming the server" '^error: cannot reach the server at http://127.0.0.1:1: ' "$(cat "$WORK/err")"
printf 'viewer-password-1\n' | "$CTL" user create viewer --role view --password-stdin >/dev/null 2>&1
printf 'viewer-password-1\n' | "$CTL" login "$SERVER" --username viewer --password-stdin --context viewer >/dev/null 2>&1
"$CTL" config use-context default >/dev/null
run delete tenant rack --context viewer
expect_eq "missing permissions exit 1" "1" "$RC"
expect_match "with the server's reason" '^error: .*forbidden|^error: .*role' "$(cat "$WORK/err")"
run export simmy "$WORK/export-viewer" --context viewer
expect_match "a view user may not export (it holds the state and credentials): 403" '^1 error: .*(forbidden|role)' \
	"$RC $(cat "$WORK/err")"
expect_eq "and gets no directory" "no" "$([ -e "$WORK/export-viewer" ] && echo yes || echo no)"
expect_eq "the refusal is audited too (and the bad backend's 422)" "200 200 200 403 422" \
	"$(curl -s -H "Authorization: Bearer $ADMIN_TOKEN" "$SERVER/api/v1/audit?verb=export&tenant=simmy" | grep -o '"code":[0-9]*' | sed 's/"code"://' | sort | tr '\n' ' ' | sed 's/ $//')"
# a user changes their own password, with the viewer's token (a view user: self-service)
printf 'wrong-password-1\nviewer-password-2\n' | "$CTL" password --password-stdin --context viewer >"$WORK/out" 2>"$WORK/err"
expect_match "password with a wrong current password is refused" '^1 error: ' "$? $(cat "$WORK/err")"
printf 'viewer-password-1\nviewer-password-2\n' | "$CTL" password --password-stdin --context viewer >"$WORK/out" 2>"$WORK/err"
expect_eq "password changes one's own password" "0 password changed" "$? $(cat "$WORK/out")"
printf 'viewer-password-1\n' | "$CTL" login "$SERVER" --username viewer --password-stdin --context viewer-old >/dev/null 2>&1
expect_eq "the old password no longer logs in" "1" "$?"
printf 'viewer-password-2\n' | "$CTL" login "$SERVER" --username viewer --password-stdin --context viewer >/dev/null 2>&1
expect_eq "the new one does" "0" "$?"
"$CTL" config use-context default >/dev/null
run password extra
expect_eq "password takes no arguments" "2" "$RC"
run get tenants --output bogus
expect_eq "a usage error exits 2" "2" "$RC"
run frobnicate
expect_eq "an unknown command exits 2" "2" "$RC"
run get ng cp
expect_eq "a tenant-scoped object without -t is a usage error" "2" "$RC"

# --- delete, logout ---------------------------------------------------------------------------------
run delete tenant oci-demo
expect_eq "delete starts the tenant's teardown" "tenant/oci-demo deletion started" "$(cat "$WORK/out")"
run logout --context viewer
expect_eq "logout revokes the token" "0" "$RC"
run get tenants --context viewer
expect_eq "which no longer works" "1" "$RC"
expect_match "and says to log in again" 'run .rezusctl login.' "$(cat "$WORK/err")"

# the streams (logs -f, get -w) end with the same hint on a 401: logs -f with a dead token;
# the watch of a server that lists the tenants, then refuses the watch
run logs "$RUN" -f -t simmy --token rzt_not-a-real-token
expect_match "logs -f answered 401 says to log in" '^1 error: runs ".*": the server answered 401 hint: .*run .rezusctl login.' \
	"$RC $(tr '\n' ' ' <"$WORK/err")"
if command -v python3 >/dev/null; then
	cat >"$WORK/refuse-watch.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        watch = "watch=" in self.path
        body = (b'{"kind":"Status","status":"Failure","code":401,"reason":"Unauthorized"}' if watch
                else b'{"kind":"TenantList","metadata":{"resourceVersion":"1"},"items":[]}')
        self.send_response(401 if watch else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
	python3 "$WORK/refuse-watch.py" "$WORK/refuse.port" &
	REFUSE=$!
	for _ in $(seq 1 50); do [ -s "$WORK/refuse.port" ] && break; sleep 0.1; done
	run get tenants -w --server "http://127.0.0.1:$(cat "$WORK/refuse.port")"
	kill "$REFUSE" 2>/dev/null
	expect_match "get -w whose watch is answered 401 says to log in" '^1 .*the watch ended: the server answered 401 hint: .*run .rezusctl login.' \
		"$RC $(tr '\n' ' ' <"$WORK/err")"
fi

# --- TLS: verification, --insecure-skip-tls-verify, --certificate-authority ----------------------
if command -v openssl >/dev/null; then
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
		-addext "subjectAltName=IP:127.0.0.1" -keyout "$WORK/tls.key" -out "$WORK/tls.crt" >/dev/null 2>&1
	# start it on a free port, and wait until it answers
	for try in 1 2 3 4 5; do
		TLS_PORT=$((40000 + ($$ * 7 + try * 131) % 20000))
		openssl s_server -quiet -www -accept "$TLS_PORT" -cert "$WORK/tls.crt" -key "$WORK/tls.key" >/dev/null 2>&1 &
		TLS_PID=$!
		for _ in $(seq 1 100); do
			curl -sk -o /dev/null "https://127.0.0.1:$TLS_PORT/" && break 2
			kill -0 "$TLS_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill "$TLS_PID" 2>/dev/null
	done
	run version --server "https://127.0.0.1:$TLS_PORT"
	expect_match "an unverifiable certificate is refused, in one line" '^error: cannot reach the server at https://127.0.0.1:[0-9]+: .*certificate' "$(cat "$WORK/err")"
	run version --server "https://127.0.0.1:$TLS_PORT" --insecure-skip-tls-verify
	expect_match "--insecure-skip-tls-verify connects (to a server that is not RezusCloud)" 'does not answer /version like a RezusCloud server' "$(cat "$WORK/err")"
	run version --server "https://127.0.0.1:$TLS_PORT" --certificate-authority "$WORK/tls.crt"
	expect_match "--certificate-authority verifies it" 'does not answer /version like a RezusCloud server' "$(cat "$WORK/err")"
	kill "$TLS_PID" 2>/dev/null
fi

# --- completion and the man page -------------------------------------------------------------------
"$CTL" completion bash >"$WORK/completion.bash"
check "completion bash is a valid bash script" bash -n "$WORK/completion.bash"
expect_match "it completes events and ev as types" 'types=".* events .* ev ' "$(cat "$WORK/completion.bash")"
expect_match "and state's verbs" 'state\) COMPREPLY=\(\$\(compgen -W "list rollback"' "$(cat "$WORK/completion.bash")"
# comp WORD...: what the bash completion offers for the command line WORD... (the last is
# the word being completed), with this rezusctl on PATH and the default context.
comp() {
	PATH="$top_builddir:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rezusctl; echo "${COMPREPLY[*]}"' \
		_ "$WORK/completion.bash" "$@"
}
expect_eq "completion offers flags" "--tenant" "$(comp rezusctl get ng --ten)"
expect_eq "node group names, in the command's tenant" "cp workers" "$(comp rezusctl -t rack get ng '')"
expect_match "run names" '^run-[0-9a-z]+( run-[0-9a-z]+)*$' "$(comp rezusctl -t simmy logs '')"
expect_match "tenant names after -t, the type before it" '(^| )rack( |$)' "$(comp rezusctl get ng -t '')"
expect_eq "and by their start" "rack" "$(comp rezusctl get ng -t ra)"
expect_eq "node group names when -t comes right after the verb" "cp workers" "$(comp rezusctl get -t rack ng '')"
expect_eq "the type too" "nodegroups" "$(comp rezusctl get -t rack nodeg)"
expect_eq "and commands after a global flag" "logs login logout" "$(comp rezusctl -t rack lo)"
expect_match "logs -f (follow, not a file) still completes run names" '^run-[0-9a-z]+( run-[0-9a-z]+)*$' \
	"$(comp rezusctl logs -f -t simmy '')"
expect_eq "a flag's value that names nothing completes nothing" "" "$(comp rezusctl get ng --reason '')"
expect_eq "reconcile completes tenant names" "simmy" "$(comp rezusctl reconcile sim)"
expect_eq "and the commands help names" "token" "$(comp rezusctl help tok)"
expect_match "--help lists events among the types" 'events \(ev\)' "$("$CTL" --help)"
expect_match "and runners (rn), a type like the others" 'runners \(rn\)' "$("$CTL" --help)"
expect_eq "completion offers every type --help lists, and their short names" \
	"$("$CTL" --help | sed -n '/^Types:/,/^A NAME/p' | sed '$d; s/^Types://; s/[(),]/ /g' | tr -s ' \n' '\n\n' | grep . | sort | tr '\n' ' ')" \
	"$(sed -n 's/^ *local types="\(.*\)"$/\1/p' "$WORK/completion.bash" | tr ' ' '\n' | sort | tr '\n' ' ')"
expect_eq "completion completes runners' names" "runners" "$(comp rezusctl get runn)"
# zsh: the script parses, and an interactive zsh (in a pty: zsh/zpty) completes a command
# and a flag with it, through compinit and bashcompinit as a user's shell would
if command -v zsh >/dev/null; then
	"$CTL" completion zsh >"$WORK/completion.zsh"
	check "completion zsh is a valid zsh script" zsh -n "$WORK/completion.zsh"
	cat >"$WORK/drive.zsh" <<'ZSH'
# drive.zsh FILE OUT: an interactive zsh in a pty loads completion FILE, then completes
# lines with TAB; ^T appends the buffer after each to OUT.
zmodload zsh/zpty || exit 1
zpty z zsh -f -i
zpty -w z "PS1='> '; autoload -U compinit; compinit -u -D; source ${(q)1}"
zpty -w z "dump() { print -r -- \"[\$BUFFER]\" >>${(q)2}; BUFFER=; }; zle -N dump; bindkey '^T' dump"
zpty -w -n z $'rezusctl tok\t\x14'
zpty -w -n z $'rezusctl get ng --ten\t\x14'
zpty -w -n z $'rezusctl get -t rack nodeg\t\x14'
zpty -w -n z $'rezusctl get -t rack ng w\t\x14'
until [[ -s $2 && $(wc -l <$2) -ge 4 ]]; do zpty -r -t z chunk || sleep 0.1; done
zpty -d z
ZSH
	PATH="$top_builddir:$PATH" timeout 30 zsh -f "$WORK/drive.zsh" "$WORK/completion.zsh" "$WORK/zsh.out" >/dev/null 2>&1
	expect_eq "zsh completes a command, a flag, a type and a node group after get -t TENANT" \
		"[rezusctl token ]|[rezusctl get ng --tenant ]|[rezusctl get -t rack nodegroups ]|[rezusctl get -t rack ng workers ]|" \
		"$(tr '\n' '|' <"$WORK/zsh.out" 2>&1)"
elif [ -f "$top_srcdir/build/node/.installed" ]; then # tools/install-deps ran: it installs zsh
	not_ok "zsh is installed (tools/install-deps)"
else
	ok "zsh completion # SKIP zsh is not installed (tools/install-deps)"
fi
help_cmds=$("$CTL" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z-]*\)  .*/\1/p' | sort | tr '\n' ' ')
man_cmds=$(sed -n '/^\.SH COMMANDS/,/^\.SH GLOBAL/p' "$top_srcdir/man/rezusctl.1" | grep '^\.B [a-z]' |
	sed 's/^\.B //; s/\\-/-/g; s/ .*//; s/\\fR.*//' | sort -u | tr '\n' ' ')
expect_eq "the man page documents exactly the commands --help lists" "$help_cmds" "$man_cmds"
run get --help
expect_match "get --help is the command's own help, with examples" \
	'^Usage: rezusctl get TYPE .*Examples: +rezusctl get tenants' "$(tr '\n' ' ' <"$WORK/out")"
expect_eq "help get prints the same" "$(cat "$WORK/out")" "$("$CTL" help get)"
expect_match "user --help is user's" '^Usage: rezusctl user list' "$("$CTL" user --help | head -n 1)"
expect_match "token --help documents --expires durations" '--expires takes a duration' "$("$CTL" token --help)"
missing="" noexamples=""
for cmd in $help_cmds; do
	"$CTL" help "$cmd" >"$WORK/help.out"
	grep -q "^Usage: rezusctl $cmd" "$WORK/help.out" || missing="$missing $cmd"
	sed -n '/^Examples:$/,/^$/p' "$WORK/help.out" | grep -q "^  rezusctl $cmd\|^  .*| rezusctl $cmd\|rezusctl $cmd " ||
		noexamples="$noexamples $cmd"
done
expect_eq "every command has its own help" "" "$missing"
expect_eq "with an Examples: section that runs the command" "" "$noexamples"

# --- the way out's last step, as the export's README gives it: the tenant leaves RezusCloud
# without its destroy (the finalizer removed, then the delete)
cat >"$WORK/drop-finalizer" <<'SH'
#!/bin/sh
sed -i '/^  finalizers:$/d; /^  - rezuscloud\.io\/teardown$/d' "$1"
SH
chmod +x "$WORK/drop-finalizer"
EDITOR="$WORK/drop-finalizer" "$CTL" edit tenant simmy >"$WORK/out" 2>"$WORK/err"
expect_eq "edit drops the tenant's finalizer" "0 tenant/simmy edited" "$? $(cat "$WORK/out")"
run delete tenant simmy
expect_eq "the delete then answers at once: deleted, not a teardown started" "0 tenant/simmy deleted" "$RC $(cat "$WORK/out")"
run get tenant simmy
expect_eq "the tenant is gone" "1" "$RC"
expect_eq "and no destroy ran for it" "" "$(grep 'tenant=simmy .*operation=destroy' "$WORK/daemon.log")"

# --- boot --platform local, twice --------------------------------------------------------------------
# A port nothing listens on, below the kernel's ephemeral range (32768 up): a port in it
# could be taken by another test's connection between this check and the daemon's bind.
for try in 1 2 3 4 5 6 7 8; do
	BOOT_PORT=$((20000 + ($$ * 11 + try * 257) % 12000))
	curl -s -o /dev/null "http://127.0.0.1:$BOOT_PORT/" || break
done
export REZUS_BOOT_NO_SYSTEMD=1
"$CTL" boot --data-dir "$WORK/boot" --listen "127.0.0.1:$BOOT_PORT" --rezuscloud "$top_builddir/rezuscloud" >"$WORK/boot1.out" 2>&1
rc=$?
[ "$rc" = 0 ] || tail -n 5 "$WORK/boot/rezuscloud.log" >&2
expect_eq "boot --platform local goes from nothing to a logged-in context" "0" "$rc"
expect_match "its steps" 'config .*password +made.*start +background process.*ready +http://127.0.0.1.*Logged in to .* as admin \(context local\)' "$(tr '\n' ' ' <"$WORK/boot1.out")"
expect_eq "the data dir is private, the password file too" "700 600" "$(stat -c %a "$WORK/boot") $(stat -c %a "$WORK/boot/admin.password")"
expect_match "the config it writes loads the plugins found in the plugin dir" \
	"^plugin_dir: $top_builddir/plugins plugins: .* sim: \\{\\} .* talos: \\{\\}" \
	"$(sed -n '/^plugin_dir:/,$p' "$WORK/boot/rezus.conf" | tr '\n' ' ')"
expect_match "and the daemon it starts reports them in /readyz" 'plugins ok: .*sim' \
	"$(curl -s "http://127.0.0.1:$BOOT_PORT/readyz?verbose")"
run get tenants --context local
expect_eq "the context works" "0" "$RC"
"$CTL" boot --data-dir "$WORK/boot" --listen "127.0.0.1:$BOOT_PORT" --rezuscloud "$top_builddir/rezuscloud" >"$WORK/boot2.out" 2>&1
expect_eq "boot again succeeds" "0" "$?"
expect_match "skipping what is done" 'config +kept.*password +kept.*start +kept \(already running\).*login +kept' "$(tr '\n' ' ' <"$WORK/boot2.out")"
kill "$(cat "$WORK/boot/rezuscloud.pid")" 2>/dev/null

# --- boot checks its tools before it writes anything ---------------------------------------------
mkdir -p "$WORK/notools"
printf 'cli-test-password\n' | PATH="$WORK/notools" "$CTL" boot --platform docker --data-dir "$WORK/nboot" \
	--password-stdin >"$WORK/nboot.out" 2>&1
expect_eq "boot --platform docker with no talosctl fails" "1" "$?"
expect_match "naming the missing tools" "talosctl.*kubectl.*docker.* not on PATH" "$(cat "$WORK/nboot.out")"
expect_eq "before writing anything (no data dir, no admin.password)" "no" \
	"$([ -e "$WORK/nboot" ] && echo yes || echo no)"
PATH="$WORK/notools" "$CTL" boot --data-dir "$WORK/nboot" --rezuscloud "$top_builddir/rezuscloud" >"$WORK/nboot.out" 2>&1
expect_match "boot --platform local with neither tofu nor terraform fails, saying so" \
	"neither tofu nor terraform" "$(cat "$WORK/nboot.out")"
expect_eq "and writes nothing either" "no" "$([ -e "$WORK/nboot" ] && echo yes || echo no)"

# --- boot --platform docker, with recording stand-ins --------------------------------------------
mkdir -p "$WORK/bin"
# the certificate the stand-in kubectl's `exec ... cat tls-cert.pem` prints: the test
# daemon's own would do, but it serves plain HTTP on loopback; any PEM certificate is one
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=rezus-test \
	-days 1 -keyout "$WORK/standin-key.pem" -out "$WORK/standin-cert.pem" 2>/dev/null
for tool in talosctl kubectl docker; do
	cat >"$WORK/bin/$tool" <<SH
#!/bin/sh
# A stand-in for $tool (tests only): records its arguments, reads what is piped to it;
# kubectl exec's cat of the daemon's certificate prints a certificate.
echo "$tool \$*" >>"$WORK/tools.log"
case "\$*" in *"exec deployment/rezuscloud -- cat /var/lib/rezus/tls-cert.pem"*) cat "$WORK/standin-cert.pem"; exit 0 ;; esac
[ -t 0 ] || cat >/dev/null
exit 0
SH
	chmod +x "$WORK/bin/$tool"
done
printf 'cli-test-password\n' | PATH="$WORK/bin:$PATH" REZUS_BOOT_SERVER="$SERVER" REZUS_BOOT_MANIFEST="$top_srcdir/deploy/kubernetes/rezuscloud.yaml" \
	"$CTL" boot --platform docker --data-dir "$WORK/dboot" --password-stdin >"$WORK/dboot.out" 2>&1
expect_eq "boot --platform docker succeeds with the stand-ins" "0" "$?"
expect_match "it creates a Talos cluster with talosctl" '^talosctl cluster create --provisioner docker --name rezus-management' "$(cat "$WORK/tools.log")"
expect_match "deploys the shipped manifest with kubectl" "^kubectl --kubeconfig $WORK/dboot/management.kubeconfig apply -f $top_srcdir/deploy/kubernetes/rezuscloud.yaml" "$(cat "$WORK/tools.log")"
expect_match "and waits for the rollout" 'rollout status deployment/rezuscloud' "$(cat "$WORK/tools.log")"
expect_match "fetches the daemon's self-signed certificate" \
	'^kubectl --kubeconfig .* -n rezus exec deployment/rezuscloud -- cat /var/lib/rezus/tls-cert.pem' "$(cat "$WORK/tools.log")"
expect_eq "and keeps it beside the cluster's files" "$(cat "$WORK/standin-cert.pem")" "$(cat "$WORK/dboot/management-ca.pem" 2>&1)"
expect_match "the context trusts it" "certificate-authority: $WORK/dboot/management-ca.pem\$" "$(cat "$CONF_FILE")"
expect_match "then logs in" 'Logged in to .* as admin \(context docker\)' "$(cat "$WORK/dboot.out")"
lines=$(wc -l <"$WORK/tools.log")
PATH="$WORK/bin:$PATH" REZUS_BOOT_SERVER="$SERVER" "$CTL" boot --platform docker --data-dir "$WORK/dboot" >"$WORK/dboot2.out" 2>&1
expect_eq "a second boot runs no tool again" "0 $lines" "$? $(wc -l <"$WORK/tools.log")"

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 5
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
DAEMON_PID=""
done_testing
