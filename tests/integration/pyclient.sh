#!/bin/sh
# Debian's python3-kubernetes against the daemon: the DynamicClient's discovery, list,
# create, patch (merge and JSON patch), server-side apply (conflict, force), and a watch (the client sends watch=True) resumed from
# a resourceVersion, and one the server ends after timeoutSeconds; CoreV1Api's typed Events;
# a node group's scale subresource read, patched and replaced.
# Over the daemon's TLS (k8sfront.sh), as the client sends its token only there.
. "${top_srcdir:-.}/tests/integration/k8sfront.sh"

PY=/usr/bin/python3
if ! "$PY" -c 'import kubernetes.dynamic' 2>"$WORK/import.err"; then
	not_ok "python3-kubernetes is installed (tools/install-deps)" "$(cat "$WORK/import.err")"
	done_testing
	exit 1
fi
if k8s_daemon pyclient-test-pw; then ok "the daemon starts"; else not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"; fi
expect_eq "the daemon serves TLS on its own certificate" "200" \
	"$(curl -s -o /dev/null -w '%{http_code}' --cacert "$K8S_CA" "$K8S_URL/healthz")"
kubeconfig "$WORK/kubeconfig"

cat >"$WORK/client.py" <<'PYEOF'
import datetime, json, sys, threading, time
from kubernetes import client as kclient, config, dynamic
from kubernetes.client import api_client
from kubernetes.dynamic.exceptions import DynamicApiError

def say(ok, what, detail=""):
    print(("ok - " if ok else "not ok - ") + what + ((": " + str(detail)) if detail and not ok else ""), flush=True)

client = dynamic.DynamicClient(api_client.ApiClient(configuration=config.load_kube_config(config_file=sys.argv[1])))
# discovery
tenants = client.resources.get(api_version="rezuscloud.io/v1", kind="Tenant")
ngs = client.resources.get(api_version="rezuscloud.io/v1", kind="NodeGroup")
say(tenants.namespaced is False and tenants.name == "tenants", "discovery: Tenant is cluster-scoped", tenants.namespaced)
say(ngs.namespaced is True and "ng" in (ngs.short_names or []), "discovery: NodeGroup is namespaced, short name ng", ngs.short_names)
# create
t = tenants.create(body={"apiVersion": "rezuscloud.io/v1", "kind": "Tenant",
                         "metadata": {"name": "py"}, "spec": {"clusterProvider": "sim"}})
say(t.metadata.name == "py", "create a Tenant", t.metadata.name)
ng = ngs.create(namespace="py", body={"apiVersion": "rezuscloud.io/v1", "kind": "NodeGroup",
                                     "metadata": {"name": "w", "namespace": "py"},
                                     "spec": {"role": "worker", "count": 1, "providerClass": "sim"}})
say(ng.metadata.namespace == "py" and ng.metadata.tenant == "py", "create a NodeGroup in a namespace: the tenant", ng.metadata)
# list
lst = ngs.get(namespace="py")
say([i.metadata.name for i in lst.items] == ["w"], "list the tenant's node groups", [i.metadata.name for i in lst.items])
all_ = ngs.get()
say(len(all_.items) == 1 and all_.items[0].metadata.namespace == "py", "list every tenant's", len(all_.items))
rv = lst.metadata.resourceVersion
# patch
p = ngs.patch(namespace="py", name="w", body={"spec": {"count": 2}}, content_type="application/merge-patch+json")
say(p.spec.count == 2, "merge patch", p.spec.count)
# watch resumed from the list's resourceVersion: sees the patch as MODIFIED, replayed
seen = []
for ev in ngs.watch(namespace="py", resource_version=rv, timeout=5):
    seen.append((ev["type"], ev["object"].metadata.name, ev["object"].spec.count))
    if ev["type"] == "MODIFIED":
        break
say(("MODIFIED", "w", 2) in seen, "watch from a resourceVersion replays the patch", seen)
# and a live one: a change made while watching arrives
def later():
    time.sleep(1)
    ngs.patch(namespace="py", name="w", body={"spec": {"count": 3}}, content_type="application/merge-patch+json")
threading.Thread(target=later).start()
live = []
for ev in ngs.watch(namespace="py", resource_version=p.metadata.resourceVersion, timeout=8):
    live.append((ev["type"], ev["object"].spec.count))
    if ev["object"].spec.count == 3:
        break
say(("MODIFIED", 3) in live, "a live change arrives on the watch", live)
# timeout (timeoutSeconds): the server ends the watch, and the client's loop returns
t0 = time.monotonic()
n = sum(1 for _ in ngs.watch(namespace="py", timeout=3))
took = time.monotonic() - t0
say(n == 1 and 2.5 <= took <= 6, "watch(timeout=3) returns after about 3 s", (n, took))
# JSON patch (RFC 6902): replace, a label with ~1 in its key; a failed test is 422, changing nothing
p = ngs.patch(namespace="py", name="w", content_type="application/json-patch+json",
              body=[{"op": "test", "path": "/spec/count", "value": 3},
                    {"op": "replace", "path": "/spec/count", "value": 5},
                    {"op": "add", "path": "/metadata/labels", "value": {}},
                    {"op": "add", "path": "/metadata/labels/example.com~1team", "value": "db"}])
say(p.spec.count == 5 and p.metadata.labels["example.com/team"] == "db", "JSON patch", p)
try:
    ngs.patch(namespace="py", name="w", content_type="application/json-patch+json",
              body=[{"op": "replace", "path": "/spec/count", "value": 6},
                    {"op": "test", "path": "/spec/count", "value": 3}])
    say(False, "a failed JSON patch test is refused", "it was taken")
except DynamicApiError as e:
    say(e.status == 422 and "test failed" in str(e.body), "a failed JSON patch test is 422", (e.status, e.body))
say(ngs.get(namespace="py", name="w").spec.count == 5, "and changes nothing")
# server-side apply: creates, conflicts with another field manager, forced. This client sends
# an apply's body only as text (a dict it refuses: "Cannot prepare a request message"), so
# the name and namespace are given beside it.
cfg = {"apiVersion": "rezuscloud.io/v1", "kind": "NodeGroup", "metadata": {"name": "ssa", "namespace": "py"},
       "spec": {"role": "worker", "count": 2, "providerClass": "sim"}}
def ssa(**kw):
    return ngs.server_side_apply(body=json.dumps(cfg), name="ssa", namespace="py", field_manager="py-apply", **kw)
a = ssa()
mf = [(m.manager, m.operation) for m in a.metadata.managedFields]
say(a.spec.count == 2 and mf == [("py-apply", "Apply")], "server_side_apply creates, owned by its field manager", mf)
ngs.patch(namespace="py", name="ssa", body={"spec": {"count": 4}}, content_type="application/merge-patch+json",
          field_manager="py-scaler")
cfg["spec"]["count"] = 3
try:
    ssa()
    say(False, "applying another value of a field another manager owns is a conflict", "it was taken")
except DynamicApiError as e:
    msg = json.loads(e.body).get("message")
    say(e.status == 409 and msg == 'Apply failed with 1 conflict: conflict with "py-scaler" using rezuscloud.io/v1: .spec.count',
        "applying another value of a field another manager owns is a 409 naming it", (e.status, e.body))
a = ssa(force_conflicts=True)
mf = [(m.manager, m.operation) for m in a.metadata.managedFields]
say(a.spec.count == 3 and mf == [("py-apply", "Apply")], "force_conflicts takes it", (a.spec.count, mf))
# the same by patch with the apply content type, as YAML, dropping the count it applied
a = ngs.patch(namespace="py", name="ssa", content_type="application/apply-patch+yaml", field_manager="py-apply",
              body="apiVersion: rezuscloud.io/v1\nkind: NodeGroup\nmetadata: {name: ssa}\n"
                   "spec: {role: worker, providerClass: sim}\n")
say(a.spec.count == 1, "patch as application/apply-patch+yaml: a field no longer applied goes (count defaults to 1)", a.spec.count)
# core v1 Events, typed (CoreV1Api decodes apiVersion v1 only), where kubectl describe looks
core = kclient.CoreV1Api(client.client)
evs = None
for _ in range(60):
    evs = core.list_namespaced_event("py", field_selector="involvedObject.name=py")
    if evs.items:
        break
    time.sleep(0.5)
say(len(evs.items) > 0 and all(e.api_version == "v1" and e.involved_object.kind == "Tenant" and
                               e.involved_object.name == "py" and e.metadata.namespace == "py" and
                               isinstance(e.last_timestamp, datetime.datetime) and e.count >= 1 and
                               e.source.component for e in evs.items),
    "list_namespaced_event(field_selector=involvedObject.name=py) decodes typed events", evs)
everywhere = core.list_event_for_all_namespaces(
    field_selector="involvedObject.name=py,involvedObject.namespace=,involvedObject.kind=Tenant,"
                   "involvedObject.uid=" + t.metadata.uid)
say(sorted(e.reason for e in everywhere.items) == sorted(e.reason for e in evs.items),
    "list_event_for_all_namespaces finds them by the tenant's uid, as describe asks", everywhere)
# the node group's Scale through the dynamic client's subresource
scale = ngs.subresources["scale"]
s = scale.get(namespace="py", name="w")
say(s.apiVersion == "autoscaling/v1" and s.kind == "Scale" and s.spec.replicas == 5 and
    s.status.selector == "rezuscloud.io/nodegroup=w", "read the scale subresource", s)
p = scale.patch(namespace="py", name="w", body={"spec": {"replicas": 2}},
                content_type="application/merge-patch+json")
say(p.spec.replicas == 2 and ngs.get(namespace="py", name="w").spec.count == 2,
    "merge patch of the scale sets spec.count", p)
p = scale.patch(namespace="py", name="w", content_type="application/json-patch+json",
                body=[{"op": "replace", "path": "/spec/replicas", "value": 3}])
say(p.spec.replicas == 3 and ngs.get(namespace="py", name="w").spec.count == 3,
    "JSON patch of the scale", p)
try:
    scale.replace(namespace="py", name="w", body={
        "apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "w", "namespace": "py", "resourceVersion": s.metadata.resourceVersion},
        "spec": {"replicas": 4}})
    say(False, "a replace of a stale scale is refused", "it was taken")
except DynamicApiError as e:
    say(e.status == 409, "a replace of a stale scale is a conflict", (e.status, e.body))
r = scale.replace(namespace="py", name="w", body={
    "apiVersion": "autoscaling/v1", "kind": "Scale",
    "metadata": {"name": "w", "namespace": "py", "resourceVersion": p.metadata.resourceVersion},
    "spec": {"replicas": 4}})
say(r.spec.replicas == 4 and ngs.get(namespace="py", name="w").spec.count == 4,
    "a replace of the current one is taken", r)
PYEOF
out=$(timeout 60 "$PY" "$WORK/client.py" "$WORK/kubeconfig" 2>&1)
status=$?
n_ok=0
n_bad=0
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	*) echo "# $line" ;;
	esac
done <<OUT
$out
OUT
expect_eq "the client ran to its end" "0 24" "$status $(echo "$out" | grep -c '^ok - ')"
# What the client's watch sends, watch=True (strconv.ParseBool's spelling), opens a watch;
# a value ParseBool refuses is a 400 naming the parameter.
code=$(curl -s --cacert "$K8S_CA" -o "$WORK/w.out" -w '%{http_code}' -m 2 -H "Authorization: Bearer $TOKEN" \
	"$API/tenants?watch=True")
expect_match "watch=True opens a watch" '^(200|000) event: ADDED' "$code $(head -c 300 "$WORK/w.out")"
body=$(curl -s --cacert "$K8S_CA" -H "Authorization: Bearer $TOKEN" "$API/tenants?watch=yes")
expect_match "watch=yes is a 400" '"code":400' "$body"
expect_match "naming the parameter" 'query parameter watch' "$body"

# timeoutSeconds ends a watch cleanly: a complete chunked reply (curl's exit 0, not 18 nor
# 28), after about that long; a value that is not 0 to a day is a 400 naming it.
start=$(date +%s)
curl -s --cacert "$K8S_CA" -o "$WORK/t.out" -m 10 -H "Authorization: Bearer $TOKEN" \
	"$API/tenants?watch=true&timeoutSeconds=2"
rc=$?
took=$(($(date +%s) - start))
expect_eq "a watch with timeoutSeconds=2 ends cleanly" "0" "$rc"
expect_match "after about 2 s" '^[234]$' "$took"
expect_match "having sent the current objects" '^event: ADDED' "$(head -c 100 "$WORK/t.out")"
expect_eq "timeoutSeconds=0: no limit of its own (cut by curl -m 2)" "28" \
	"$(curl -s --cacert "$K8S_CA" -o /dev/null -m 2 -H "Authorization: Bearer $TOKEN" \
		"$API/tenants?watch=true&timeoutSeconds=0"; echo $?)"
for bad in -1 1.5 abc 86401; do
	body=$(curl -s --cacert "$K8S_CA" -m 5 -H "Authorization: Bearer $TOKEN" "$API/tenants?watch=true&timeoutSeconds=$bad")
	expect_match "timeoutSeconds=$bad is a 400 naming the parameter" \
		'query parameter timeoutSeconds.*"code":400' "$body"
done
done_testing
