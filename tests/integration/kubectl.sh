#!/bin/sh
# kubectl, unchanged, against the daemon: discovery (api-resources, aggregated), get with the
# columns rezusctl get prints (a Table), -o yaml, -n, -A, -l, get -w, describe (with the
# object's events, from the core v1 paths), apply of a Tenant and of a NodeGroup with -n
# (created, unchanged, configured), patch --type=merge and --type=json, label, wait
# --for=condition, apply --server-side (conflicts, --force-conflicts, pruning,
# --dry-run=server, --show-managed-fields, every writable kind), scale (the Scale
# subresource), delete, version. kubectl sends its token only over TLS: the daemon serves it
# (k8sfront.sh).
. "${top_srcdir:-.}/tests/integration/k8sfront.sh"

for tool in kubectl curl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "$tool is installed (tools/install-deps)"
		done_testing
		exit 1
	fi
done
if k8s_daemon kubectl-test-pw; then ok "the daemon starts"; else not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"; fi
expect_eq "the daemon serves TLS on its own certificate" "200" \
	"$(curl -s -o /dev/null -w '%{http_code}' --cacert "$K8S_CA" "$K8S_URL/healthz")"
kubeconfig "$WORK/kubeconfig"
KUBECONFIG="$WORK/kubeconfig"
export KUBECONFIG
k() { timeout 30 kubectl --request-timeout=20s "$@" 2>&1; }

# --- discovery and version
out=$(k version)
expect_match "kubectl version reads the server's version" "^Server Version: v[0-9]" "$out"
out=$(k api-resources)
expect_match "api-resources lists nodegroups, namespaced, with its short name" \
	'^nodegroups +ng +rezuscloud.io/v1 +true +NodeGroup' "$out"
expect_match "and tenants, cluster-scoped" '^tenants +tn +rezuscloud.io/v1 +false +Tenant' "$out"
agg=$(curl -s --cacert "$K8S_CA" -H "Authorization: Bearer $TOKEN" -D "$WORK/agg.head" \
	-H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' \
	"$K8S_URL/apis")
expect_match "aggregated discovery answers in its own media type" \
	'Content-Type: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' \
	"$(tr -d '\r' <"$WORK/agg.head")"
expect_match "with the group's resources and their scope" \
	'"resource":"nodegroups","responseKind":\{[^}]*\},"scope":"Namespaced"' "$agg"

# --- apply: created, unchanged, configured
cat >"$WORK/tenant.yaml" <<Y
apiVersion: rezuscloud.io/v1
kind: Tenant
metadata:
  name: acme
  labels: {team: blue}
spec:
  clusterProvider: sim
Y
cat >"$WORK/ng.yaml" <<Y
apiVersion: rezuscloud.io/v1
kind: NodeGroup
metadata:
  name: workers
spec:
  role: worker
  count: 2
  providerClass: sim
Y
expect_eq "apply creates a Tenant" "tenant.rezuscloud.io/acme created" "$(k apply --validate=false -f "$WORK/tenant.yaml")"
expect_eq "apply again: unchanged" "tenant.rezuscloud.io/acme unchanged" "$(k apply --validate=false -f "$WORK/tenant.yaml")"
printf '  podSubnets: ["10.250.0.0/16"]\n' >>"$WORK/tenant.yaml"
expect_eq "apply changed: configured" "tenant.rezuscloud.io/acme configured" "$(k apply --validate=false -f "$WORK/tenant.yaml")"
expect_eq "apply -n creates a NodeGroup (metadata.namespace is the tenant)" \
	"nodegroup.rezuscloud.io/workers created" "$(k apply --validate=false -n acme -f "$WORK/ng.yaml")"
expect_eq "apply -n again: unchanged" "nodegroup.rezuscloud.io/workers unchanged" \
	"$(k apply --validate=false -n acme -f "$WORK/ng.yaml")"
sed -i 's/count: 2/count: 3/' "$WORK/ng.yaml"
expect_eq "apply -n changed: configured" "nodegroup.rezuscloud.io/workers configured" \
	"$(k apply --validate=false -n acme -f "$WORK/ng.yaml")"
expect_eq "the change is stored" "3" "$(k get ng workers -n acme -o jsonpath='{.spec.count}')"
expect_eq "metadata.namespace is emitted beside metadata.tenant" "acme acme" \
	"$(k get ng workers -n acme -o jsonpath='{.metadata.namespace} {.metadata.tenant}')"

# the other writable kinds: a ConfigPatch with -n, a User (whose password must not stay
# in the last-applied annotation)
cat >"$WORK/cp.yaml" <<Y
apiVersion: rezuscloud.io/v1
kind: ConfigPatch
metadata: {name: ntp}
spec: {patch: "machine: {}\\n", targetRole: all}
Y
expect_eq "apply -n creates a ConfigPatch" "configpatch.rezuscloud.io/ntp created" "$(k apply --validate=false -n acme -f "$WORK/cp.yaml")"
expect_eq "unchanged" "configpatch.rezuscloud.io/ntp unchanged" "$(k apply --validate=false -n acme -f "$WORK/cp.yaml")"
sed -i 's/targetRole: all/targetRole: worker/' "$WORK/cp.yaml"
expect_eq "configured" "configpatch.rezuscloud.io/ntp configured" "$(k apply --validate=false -n acme -f "$WORK/cp.yaml")"
printf 'apiVersion: rezuscloud.io/v1\nkind: User\nmetadata: {name: viewer}\nspec: {role: view, password: "Sw0rdfish-kubectl-7"}\n' >"$WORK/user.yaml"
expect_eq "apply creates a User" "user.rezuscloud.io/viewer created" "$(k apply --validate=false -f "$WORK/user.yaml")"
out=$(k get user viewer -o yaml)
expect_match "its last-applied annotation is kept" 'last-applied-configuration' "$out"
if printf '%s' "$out" | grep -q 'Sw0rdfish'; then
	not_ok "without the password" "$out"
else
	ok "without the password"
fi
sed -i 's/role: view/role: edit/' "$WORK/user.yaml"
expect_eq "a change configures it" "user.rezuscloud.io/viewer configured" "$(k apply --validate=false -f "$WORK/user.yaml")"
expect_eq "the change is stored" "edit" "$(k get user viewer -o jsonpath='{.spec.role}')"

# --- get: the table columns, -o yaml, -n, -A, -l
out=$(k get tenants)
expect_match "get tenants prints rezusctl's columns" '^NAME +PROVIDER +PHASE +MACHINES +KUBERNETES +AGE$' "$out"
expect_match "and the row" '^acme +sim +[A-Za-z]+ ' "$out"
out=$(k get ng -n acme)
expect_match "get ng -n prints the node group columns" '^NAME +ROLE +CLASS +DESIRED +READY +AGE$' "$out"
expect_match "with its cells" '^workers +worker +sim +3 ' "$out"
out=$(k get ng -n acme -o wide)
expect_match "-o wide adds the wide columns" '^NAME +ROLE +CLASS +DESIRED +READY +AGE +TOTAL$' "$out"
out=$(k get ng -A)
expect_match "get -A lists every tenant's, the tenant as the namespace" '^acme +workers +worker +sim +3 ' "$out"
out=$(k get tn acme -o yaml)
expect_match "-o yaml prints the object" '^kind: Tenant$' "$out"
expect_match "with kubectl's last-applied annotation kept" 'kubectl.kubernetes.io/last-applied-configuration' "$out"
expect_match "-l selects by label" '^acme ' "$(k get tn -l team=blue)"
expect_match "-l that matches nothing finds nothing" 'No resources found' "$(k get tn -l team=red)"

# --- label, patch, describe
expect_eq "label" "tenant.rezuscloud.io/acme labeled" "$(k label tn acme tier=gold)"
expect_eq "the label is stored" "gold" "$(k get tn acme -o jsonpath='{.metadata.labels.tier}')"
expect_eq "patch --type=merge" "nodegroup.rezuscloud.io/workers patched" \
	"$(k patch ng workers -n acme --type=merge -p '{"spec":{"count":1}}')"
expect_eq "the patch is stored" "1" "$(k get ng workers -n acme -o jsonpath='{.spec.count}')"
expect_eq "patch --type=json (replace, add a label with ~1 in its key)" "tenant.rezuscloud.io/acme patched" \
	"$(k patch tn acme --type=json -p '[{"op":"replace","path":"/metadata/labels/tier","value":"silver"},{"op":"add","path":"/metadata/labels/example.com~1team","value":"db"}]')"
expect_eq "the replaced label is stored" "silver" "$(k get tn acme -o jsonpath='{.metadata.labels.tier}')"
expect_eq "and the added one, a slash in its key" "db" "$(k get tn acme -o jsonpath='{.metadata.labels.example\.com/team}')"
rv=$(k get tn acme -o jsonpath='{.metadata.resourceVersion}')
out=$(k patch tn acme --type=json -p '[{"op":"replace","path":"/metadata/labels/tier","value":"bronze"},{"op":"test","path":"/metadata/labels/tier","value":"gold"}]')
expect_match "a failing test op is refused as invalid, naming the operation" 'is invalid: /metadata/labels/tier: operation 1 \(test\): test failed' "$out"
expect_eq "and changes nothing" "silver" "$(k get tn acme -o jsonpath='{.metadata.labels.tier}')"
out=$(k patch tn acme --type=json -p '{"op":"add"}')
expect_match "a patch that is not an array is a bad request" 'must be an array of operations' "$out"
out=$(k describe ng workers -n acme)
expect_match "describe names the tenant as the namespace" '^Namespace: +acme$' "$out"
expect_match "and shows the spec" 'Provider Class: +sim' "$out"

# --- get -w sees a change, as a table row (bounded)
(timeout 6 kubectl get ng -n acme -w >"$WORK/watch.out" 2>&1) &
WATCH=$!
sleep 2
k patch ng workers -n acme --type=merge -p '{"spec":{"count":4}}' >/dev/null
wait "$WATCH"
out=$(cat "$WORK/watch.out")
expect_match "get -w prints the current row" '^workers +worker +sim +1 ' "$out"
expect_match "and the change, in the same columns" '^workers +worker +sim +4 ' "$out"
expect_eq "with one header" "1" "$(grep -c '^NAME' "$WORK/watch.out")"

# --- wait for a condition the engine sets
out=$(k wait --for=condition=Reconciled tn/acme --timeout=40s)
expect_eq "wait --for=condition=Reconciled" "tenant.rezuscloud.io/acme condition met" "$out"
# acme has no control plane: never Ready; a tenant with one becomes Ready (the sim plugin)
out=$(k wait --for=condition=Ready tn/acme --timeout=3s)
expect_match "wait --for=condition=Ready times out while the tenant is not Ready" 'timed out' "$out"
expect_eq "whose Ready condition says why" "False Provisioning" \
	"$(k get tn acme -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}')"
printf 'apiVersion: rezuscloud.io/v1\nkind: Tenant\nmetadata: {name: demo}\nspec: {clusterProvider: sim}\n---\napiVersion: rezuscloud.io/v1\nkind: NodeGroup\nmetadata: {name: cp, namespace: demo}\nspec: {role: controlplane, count: 1, providerClass: sim}\n' >"$WORK/demo.yaml"
k apply --validate=false -f "$WORK/demo.yaml" >/dev/null
out=$(k wait --for=condition=Ready tn/demo --timeout=60s)
expect_eq "wait --for=condition=Ready tenant/demo" "tenant.rezuscloud.io/demo condition met" "$out"
expect_eq "its phase is Ready" "Ready" "$(k get tn demo -o jsonpath='{.status.phase}')"
out=$(k wait --for=condition=Ready ng/cp -n demo --timeout=20s)
expect_eq "and its node group's" "nodegroup.rezuscloud.io/cp condition met" "$out"
# an etcd snapshot asked for with kubectl: Complete, and listed in the Table's columns
printf 'apiVersion: rezuscloud.io/v1\nkind: EtcdBackup\nmetadata: {name: snap, namespace: demo}\nspec: {}\n' |
	k create --validate=false -f - >/dev/null
out=$(k wait --for=condition=Complete eb/snap -n demo --timeout=30s)
expect_eq "kubectl wait --for=condition=Complete etcdbackup" "etcdbackup.rezuscloud.io/snap condition met" "$out"
expect_match "kubectl get etcdbackups prints its row" '^snap +Succeeded +[0-9]+ +1\.12\.0 +1\.35\.0 ' \
	"$(k get etcdbackups -n demo --no-headers)"
# a machine is Ready as observation found it; a run and an upgrade are Complete once over
mc=$(k get mc -n demo -o jsonpath='{.items[0].metadata.name}')
out=$(k wait --for=condition=Ready "mc/$mc" -n demo --timeout=20s)
expect_eq "wait --for=condition=Ready machine" "machine.rezuscloud.io/$mc condition met" "$out"
run=$(k get runs -n demo -o jsonpath='{.items[0].metadata.name}')
out=$(k wait --for=condition=Complete "run/$run" -n demo --timeout=20s)
expect_eq "wait --for=condition=Complete run" "run.rezuscloud.io/$run condition met" "$out"
expect_eq "whose Failed condition is False" "False" \
	"$(k get run "$run" -n demo -o jsonpath='{.status.conditions[?(@.type=="Failed")].status}')"
printf 'apiVersion: rezuscloud.io/v1\nkind: UpgradeRun\nmetadata: {name: dry, namespace: demo}\nspec: {component: kubernetes, targetVersion: 9.0.0, dryRun: true}\n' |
	k create --validate=false -f - >/dev/null
out=$(k wait --for=condition=Failed up/dry -n demo --timeout=20s)
expect_eq "a dry run that cannot upgrade is Failed" "upgraderun.rezuscloud.io/dry condition met" "$out"
expect_match "and the table says it was a dry run" '^dry +kubernetes +9\.0\.0 +true +Failed ' \
	"$(k get up -n demo --no-headers)"

# --- a manifest directory without -n: the examples name their tenant as metadata.namespace,
# which kubectl's default namespace does not override; applied again, nothing changes
mkdir -p "$WORK/ex"
for f in "$top_srcdir"/examples/sim/*.yaml; do sed 's/\bdemo\b/exdemo/' "$f" >"$WORK/ex/$(basename "$f")"; done
out=$(k apply -f "$WORK/ex/" 2>&1)
expect_match "apply -f DIR without -n creates the tenant" 'tenant.rezuscloud.io/exdemo created' "$out"
expect_match "and both node groups, in it" 'nodegroup.rezuscloud.io/cp created.*nodegroup.rezuscloud.io/workers created' "$(echo $out)"
expect_eq "they are the tenant's" "cp workers" "$(k get ng -n exdemo -o jsonpath='{.items[*].metadata.name}')"
out=$(k apply -f "$WORK/ex/" 2>&1)
expect_eq "applied again, all unchanged" "3" "$(echo "$out" | grep -c ' unchanged$')"
# an object naming its tenant only as metadata.tenant gets kubectl's default namespace: the
# refusal says what to do
out=$(printf 'apiVersion: rezuscloud.io/v1\nkind: NodeGroup\nmetadata: {name: only, tenant: exdemo}\nspec: {role: worker, count: 0, providerClass: sim}\n' | k apply -f - 2>&1)
expect_match "metadata.tenant alone is refused with the way out" 'name the tenant as metadata.namespace, or give -n exdemo' "$out"
k delete tenant exdemo --wait=false >/dev/null

# --- fieldValidation, as kubectl's --validate sends it
bogus='apiVersion: rezuscloud.io/v1\nkind: NodeGroup\nmetadata: {name: %s, namespace: demo}\nspec: {role: worker, count: 0, providerClass: sim, flavour: x}\n'
out=$(printf "$bogus" strict | k apply -f - 2>&1)
expect_match "apply --validate=strict (the default) refuses an unknown field" 'spec\.flavour.*unknown field' "$out"
expect_match "and stores nothing" 'NotFound|not found' "$(k get ng strict -n demo 2>&1)"
out=$(printf "$bogus" warned | k apply --validate=warn -f - 2>&1)
expect_match "apply --validate=warn prints the server's warning" 'Warning: unknown field "spec\.flavour"' "$out"
expect_match "and applies the rest" 'nodegroup.rezuscloud.io/warned created' "$out"
out=$(printf "$bogus" ignored | k apply --validate=false -f - 2>&1)
expect_eq "apply --validate=false drops it without a word" 'nodegroup.rezuscloud.io/ignored created' "$out"
expect_eq "the field is not stored" '' "$(k get ng ignored -n demo -o jsonpath='{.spec.flavour}')"
k delete ng warned ignored -n demo --wait=false >/dev/null

# --- explain: every field of every kind has a description (the OpenAPI group-version document)
# explain --recursive prints names only: each object's own explain shows its fields' descriptions
nodesc=""
for kind in $(k api-resources --api-group=rezuscloud.io -o name | sed 's/\..*//'); do
	# the object paths: the kind, then each field of type Object or []Object, by indentation
	paths=$(k explain "$kind" --recursive | awk -v kind="$kind" '
		/^FIELDS:/ { on = 1; next }
		on && NF >= 2 && $2 ~ /Object>$/ {
			match($0, /^ */); depth = RLENGTH / 2
			stack[depth] = $1
			p = kind; for (i = 1; i <= depth; i++) p = p "." stack[i]
			print p
		}')
	for path in "$kind" $paths; do
		out=$(k explain "$path")
		case "$out" in
		*"<no description>"* | *error:*) nodesc="$nodesc $path" ;;
		esac
		checked=$((${checked:-0} + 1))
	done
done
echo "# explain: $checked object paths"
expect_eq "kubectl explain shows a description for every field of every kind" "" "$nodesc"
[ "${checked:-0}" -gt 60 ] && ok "explain walked the kinds' objects ($checked)" ||
	not_ok "explain walked the kinds' objects" "only ${checked:-0}"
out=$(k explain nodegroups.spec.taints)
expect_match "explain nodegroups.spec.taints describes effect" 'effect.*<string>' "$out"
expect_match "in words" 'pods that do not tolerate it' "$out"

# kubectl diff: the group-version document to validate, then a server-side dry run
sed 's/team: blue/team: red/' "$WORK/tenant.yaml" >"$WORK/tenant-red.yaml"
out=$(k diff -f "$WORK/tenant-red.yaml")
expect_match "kubectl diff shows what the server would change" '^\+ +team: red' "$out"
expect_match "and what it holds now" '^- +team: blue' "$out"

# --- server-side apply: created, applied again without a write, a conflict with another field
# manager named as Kubernetes names it, --force-conflicts, a field dropped from the manifest
# removed, --dry-run=server, metadata.managedFields shown
cat >"$WORK/ssa-ng.yaml" <<Y
apiVersion: rezuscloud.io/v1
kind: NodeGroup
metadata:
  name: ssa
  labels: {tier: gold}
spec:
  role: worker
  count: 2
  providerClass: sim
Y
ssa() { k apply --server-side --validate=false "$@"; }
expect_eq "apply --server-side creates a NodeGroup" "nodegroup.rezuscloud.io/ssa serverside-applied" \
	"$(ssa -n acme -f "$WORK/ssa-ng.yaml")"
# what the applier owns: the generation and the managers' entries (the engine's status writes
# to the node group, as its run goes, are not the apply's and may come at any time)
owned() { k get ng ssa -n acme -o jsonpath='{.metadata.generation} {.metadata.managedFields}'; }
before=$(owned)
expect_eq "applied again" "nodegroup.rezuscloud.io/ssa serverside-applied" "$(ssa -n acme -f "$WORK/ssa-ng.yaml")"
expect_eq "which wrote nothing (the same generation and managedFields)" "$before" "$(owned)"
out=$(k get ng ssa -n acme -o yaml --show-managed-fields)
expect_match "get -o yaml --show-managed-fields shows who owns what" \
	'manager: kubectl$' "$out"
expect_match "an Apply entry" 'operation: Apply$' "$out"
expect_match "with the fields in FieldsV1" 'f:count: \{\}' "$out"
expect_eq "another manager scales it (merge patch, --field-manager=scaler)" "nodegroup.rezuscloud.io/ssa patched" \
	"$(k patch ng ssa -n acme --type=merge --field-manager=scaler -p '{"spec":{"count":5}}')"
expect_eq "each field has its manager" "kubectl:Apply scaler:Update " \
	"$(k get ng ssa -n acme --show-managed-fields -o jsonpath='{range .metadata.managedFields[*]}{.manager}:{.operation} {end}')"
sed -i 's/count: 2/count: 3/' "$WORK/ssa-ng.yaml"
out=$(ssa -n acme -f "$WORK/ssa-ng.yaml")
expect_match "applying another count conflicts, naming the manager and the field" \
	'^error: Apply failed with 1 conflict: conflict with "scaler" using rezuscloud.io/v1: \.spec\.count$' "$out"
expect_eq "and changes nothing" "5" "$(k get ng ssa -n acme -o jsonpath='{.spec.count}')"
expect_eq "--force-conflicts takes the field" "nodegroup.rezuscloud.io/ssa serverside-applied" \
	"$(ssa --force-conflicts -n acme -f "$WORK/ssa-ng.yaml")"
expect_eq "the applied count is stored" "3" "$(k get ng ssa -n acme -o jsonpath='{.spec.count}')"
expect_eq "kubectl owns it now; the scaler, left with nothing, is gone" "kubectl:Apply " \
	"$(k get ng ssa -n acme --show-managed-fields -o jsonpath='{range .metadata.managedFields[*]}{.manager}:{.operation} {end}')"
sed -i '/labels:/d' "$WORK/ssa-ng.yaml"
ssa -n acme -f "$WORK/ssa-ng.yaml" >/dev/null
expect_eq "a label dropped from the manifest is removed" "" \
	"$(k get ng ssa -n acme -o jsonpath='{.metadata.labels}')"
sed -i 's/count: 3/count: 4/' "$WORK/ssa-ng.yaml"
expect_eq "--dry-run=server" "nodegroup.rezuscloud.io/ssa serverside-applied (server dry run)" \
	"$(ssa --dry-run=server -n acme -f "$WORK/ssa-ng.yaml")"
expect_eq "stores nothing" "3" "$(k get ng ssa -n acme -o jsonpath='{.spec.count}')"
out=$(k patch ng ssa -n acme --type=merge -p '{"metadata":{"managedFields":[]}}')
expect_eq "managedFields: [] clears them" "" \
	"$(k get ng ssa -n acme --show-managed-fields -o jsonpath='{.metadata.managedFields}')"

# the other writable kinds, by server-side apply
printf 'apiVersion: rezuscloud.io/v1\nkind: Tenant\nmetadata: {name: ssa}\nspec: {clusterProvider: sim}\n' >"$WORK/ssa-tn.yaml"
expect_eq "a Tenant" "tenant.rezuscloud.io/ssa serverside-applied" "$(ssa -f "$WORK/ssa-tn.yaml")"
printf 'apiVersion: rezuscloud.io/v1\nkind: ConfigPatch\nmetadata: {name: ssa}\nspec: {patch: "machine: {}\\n", targetRole: all}\n' >"$WORK/ssa-cp.yaml"
expect_eq "a ConfigPatch" "configpatch.rezuscloud.io/ssa serverside-applied" "$(ssa -n ssa -f "$WORK/ssa-cp.yaml")"
printf 'apiVersion: rezuscloud.io/v1\nkind: User\nmetadata: {name: ssa}\nspec: {role: view, password: "Sw0rdfish-ssa-9"}\n' >"$WORK/ssa-user.yaml"
expect_eq "a User" "user.rezuscloud.io/ssa serverside-applied" "$(ssa -f "$WORK/ssa-user.yaml")"
out=$(k get user ssa -o yaml --show-managed-fields)
expect_match "owned by kubectl" 'manager: kubectl$' "$out"
if printf '%s' "$out" | grep -qi 'Sw0rdfish\|password'; then
	not_ok "neither the password nor its field is kept, in the object or its managers" "$out"
else
	ok "neither the password nor its field is kept, in the object or its managers"
fi
printf 'apiVersion: rezuscloud.io/v1\nkind: AccessBinding\nmetadata: {name: ssa}\nspec: {role: view, subjects: [{kind: User, name: ssa}], tenants: {names: [ssa]}}\n' >"$WORK/ssa-ab.yaml"
expect_eq "an AccessBinding" "accessbinding.rezuscloud.io/ssa serverside-applied" "$(ssa -f "$WORK/ssa-ab.yaml")"
printf 'apiVersion: rezuscloud.io/v1\nkind: UpgradeRun\nmetadata: {name: ssa}\nspec: {component: talos, targetVersion: 1.12.1, dryRun: true}\n' >"$WORK/ssa-up.yaml"
expect_eq "an UpgradeRun, created" "upgraderun.rezuscloud.io/ssa serverside-applied" "$(ssa -n ssa -f "$WORK/ssa-up.yaml")"
expect_eq "and applied again unchanged" "upgraderun.rezuscloud.io/ssa serverside-applied" "$(ssa -n ssa -f "$WORK/ssa-up.yaml")"
sed -i 's/1.12.1/1.12.2/' "$WORK/ssa-up.yaml"
expect_match "but never changed" 'never changed' "$(ssa -n ssa -f "$WORK/ssa-up.yaml")"
printf 'apiVersion: rezuscloud.io/v1\nkind: Run\nmetadata: {name: ssa}\nspec: {operation: plan}\n' >"$WORK/ssa-run.yaml"
expect_eq "a Run" "run.rezuscloud.io/ssa serverside-applied" "$(ssa -n ssa -f "$WORK/ssa-run.yaml")"

# a node group to scale below, made now so that its status is derived by then
printf 'apiVersion: rezuscloud.io/v1\nkind: NodeGroup\nmetadata: {name: workers, namespace: demo}\nspec: {role: worker, count: 1, providerClass: sim}\n' |
	k apply --validate=false -f - >/dev/null

# --- events as kubectl finds them: describe asks core v1 (/api/v1/events for a Tenant,
# /api/v1/namespaces/demo/events for the rest) by involvedObject name, namespace, kind, uid
out=$(k describe tn demo)
expect_match "describe tenant shows its events" '^Events:$' "$out"
expect_match "type, reason, age, from and message" '^  Normal +Ready +[0-9a-z]+ +engine +phase Ready \(was' "$out"
out=$(k describe ng cp -n demo)
expect_match "describe nodegroup shows its events" '^  Normal +Ready +[0-9a-z]+ +engine +1 of 1 machines ready' "$out"
if printf '%s' "$out" | grep -q 'phase Ready'; then
	not_ok "and not its tenant's" "$out"
else
	ok "and not its tenant's"
fi
expect_match "describe machine shows its events" '^  Normal +MachineReady +.* observer ' "$(k describe mc cp-0 -n demo)"
run=$(k get runs -n demo -o jsonpath='{.items[0].metadata.name}')
expect_match "describe run shows its events" '^  Normal +RunSucceeded +.* engine +succeeded' "$(k describe run "$run" -n demo)"
expect_match "kubectl events --for a node group" '^[0-9a-z]+ +Normal +Ready +NodeGroup/cp +1 of 1 machines ready' \
	"$(k events -n demo --for nodegroup/cp)"
out=$(k get --raw '/api/v1/namespaces/demo/events?fieldSelector=involvedObject.kind=NodeGroup')
expect_match "get --raw of the core v1 path: an EventList of apiVersion v1" '^\{"apiVersion":"v1","kind":"EventList"' "$out"
expect_match "its items core v1 Events about node groups" '"apiVersion":"v1","kind":"Event",.*"involvedObject":\{"kind":"NodeGroup","name":"[a-z]+","namespace":"demo","uid":"[-0-9a-f]+","apiVersion":"rezuscloud.io/v1"\}' "$out"
if printf '%s' "$out" | grep -q '"kind":"Tenant"'; then not_ok "selected by kind" "$out"; else ok "selected by kind"; fi
out=$(k get --raw '/api/v1/events?fieldSelector=involvedObject.name=demo,involvedObject.namespace=,involvedObject.kind=Tenant,involvedObject.fieldPath=x')
expect_match "a field it cannot select by is refused, the message whole words" 'not supported \(use metadata.name, .*, \.\.\.\) at position [0-9]+' "$out"

# --- kubectl scale: the node group's autoscaling/v1 Scale, found through discovery
k wait --for=jsonpath='{.status.desired}'=1 ng/workers -n demo --timeout=30s >/dev/null
expect_match "the Scale reads spec.count" '"apiVersion":"autoscaling/v1","kind":"Scale",.*"spec":\{"replicas":1\}' \
	"$(k get --raw /apis/rezuscloud.io/v1/namespaces/demo/nodegroups/workers/scale)"
expect_eq "kubectl scale up" "nodegroup.rezuscloud.io/workers scaled" "$(k scale nodegroup/workers -n demo --replicas=3)"
expect_eq "the spec changes" "3" "$(k get ng workers -n demo -o jsonpath='{.spec.count}')"
rv=$(k get ng workers -n demo -o jsonpath='{.metadata.resourceVersion}')
expect_eq "scale with the current --resource-version (a PUT of the Scale)" "nodegroup.rezuscloud.io/workers scaled" \
	"$(k scale nodegroup/workers -n demo --replicas=2 --resource-version="$rv")"
expect_match "scale with a stale --resource-version is refused" "Expected resource version to be $rv, was [0-9]+" \
	"$(k scale nodegroup/workers -n demo --replicas=5 --resource-version="$rv")"
printf '{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"workers","namespace":"demo","resourceVersion":"%s"},"spec":{"replicas":5}}' "$rv" >"$WORK/scale.json"
expect_match "and by the server: a PUT of a stale Scale is a conflict" 'Error from server \(Conflict\)' \
	"$(k replace --raw /apis/rezuscloud.io/v1/namespaces/demo/nodegroups/workers/scale -f "$WORK/scale.json")"
expect_eq "the spec stays" "2" "$(k get ng workers -n demo -o jsonpath='{.spec.count}')"
expect_match "replicas beyond the node group's bounds are invalid, naming spec.replicas" 'spec.replicas: .*between 0 and 1000' \
	"$(k scale nodegroup/workers -n demo --replicas=1001)"
for _ in $(seq 1 40); do
	out=$(k describe ng workers -n demo)
	printf '%s' "$out" | grep -q 'ScaledUp' && break
	sleep 0.5
done
expect_match "describe shows the scaling" '^  Normal +ScaledUp +.* engine +desired machines [23] \(were 1\)' "$out"

# --- dry run, then delete
expect_match "create --dry-run=server stores nothing" 'created \(server dry run\)' \
	"$(printf 'apiVersion: rezuscloud.io/v1\nkind: NodeGroup\nmetadata: {name: dry}\nspec: {role: worker, count: 1, providerClass: sim}\n' |
		k create --validate=false --dry-run=server -n acme -f -)"
expect_match "the dry run left nothing" 'NotFound|not found' "$(k get ng dry -n acme)"
expect_eq "delete" 'nodegroup.rezuscloud.io "workers" deleted' "$(k delete ng workers -n acme --wait=false)"
expect_match "the node group is gone" 'NotFound|not found' "$(k get ng workers -n acme)"

done_testing
