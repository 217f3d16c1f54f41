#!/bin/sh
# kubectl, unchanged, against the daemon: discovery (api-resources, aggregated), get with the
# columns rezusctl get prints (a Table), -o yaml, -n, -A, -l, get -w, describe (with the
# object's events, from the core v1 paths), apply of a Tenant and of a NodeGroup with -n
# (created, unchanged, configured), patch --type=merge and --type=json, label, wait
# --for=condition, scale (the Scale subresource), delete, version. kubectl sends its token
# only over TLS: the daemon serves it (k8sfront.sh).
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
