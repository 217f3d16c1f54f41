#!/bin/sh
# Access per tenant (docs/security.md, "Access per tenant"): an AccessBinding grants the
# group team-a edit on the tenants labelled team=a. alice (role none, in team-a) reaches a1
# and its objects, state and node groups, and nothing of b1 (team=b): not through the API,
# not with kubectl, not with terraform's terraform_remote_state of b1's state; carol (role
# none, no binding) reaches neither; bob (role edit) keeps his role on every tenant. A token
# keeps its ceiling. Lists and watches across tenants show alice a1 and a2 only (pages,
# Tables, kubectl get -A, a watch's events); deleting the binding takes her access at once,
# from a watch already open too; /api/v1/summary counts what she may see. kubectl auth
# can-i (and --list) and whoami answer from the same rules.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v terraform || command -v tofu || true)
[ -n "$TF" ] || { not_ok "terraform is installed (tools/install-deps)"; done_testing; exit 1; }
export HOME="$WORK/home"
mkdir -p "$HOME"
unset KUBECONFIG
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
  tls:
    self_signed: true
tofu:
  binary: $TF
  debounce: 200ms
  resync: 0s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
REZUSCLOUD_ADMIN_PASSWORD=tenancy-admin-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf" ||
	not_ok "the daemon starts" "$(tail -n 5 "$WORK/daemon.log")"
BASE="https://127.0.0.1:$PORT"
API="$BASE/api/v1"
CA="$WORK/data/tls-cert.pem"
export CURL_CA_BUNDLE="$CA"
login() { # USER PASSWORD: a session token
	curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d "{\"username\":\"$1\",\"password\":\"$2\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}
ADMIN=$(login admin tenancy-admin-pw)
as() { # TOKEN curl-args...
	t=$1
	shift
	curl -s -H "Authorization: Bearer $t" -H 'Content-Type: application/json' "$@"
}
code() { # TOKEN METHOD PATH [BODY]: the status code
	if [ -n "${4:-}" ]; then
		curl -s -o /dev/null -w '%{http_code}' -X "$2" -H "Authorization: Bearer $1" \
			-H 'Content-Type: application/merge-patch+json' "$API$3" -d "$4"
	else
		curl -s -o /dev/null -w '%{http_code}' -X "$2" -H "Authorization: Bearer $1" "$API$3"
	fi
}
js() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>/dev/null; }

for t in a1:a a2:a b1:b; do
	name=${t%%:*} team=${t#*:}
	as "$ADMIN" -o /dev/null -X POST "$API/tenants" -d "{\"metadata\":{\"name\":\"$name\",\"labels\":{\"team\":\"$team\"}},\"spec\":{\"clusterProvider\":\"sim\"}}"
	as "$ADMIN" -o /dev/null -X POST "$API/tenants/$name/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}'
done
for u in alice:none:'["team-a"]' bob:edit:'[]' carol:none:'[]'; do
	name=${u%%:*} rest=${u#*:} role=${rest%%:*} groups=${rest#*:}
	c=$(as "$ADMIN" -o /dev/null -w '%{http_code}' -X POST "$API/users" -d "{\"metadata\":{\"name\":\"$name\"},\"spec\":{\"role\":\"$role\",\"password\":\"$name-password-1\",\"groups\":$groups}}")
	expect_eq "user $name (role $role) created" "201" "$c"
done
out=$(as "$ADMIN" -X POST "$API/users" -d '{"metadata":{"name":"dave"},"spec":{"role":"none","password":"dave-password-1","groups":["Not A Group"]}}')
expect_match "a bad group name is refused, naming the field" '"code":422.*spec.groups' "$out"
out=$(as "$ADMIN" -X POST "$API/accessbindings" -d '{"metadata":{"name":"nothing"},"spec":{"role":"edit","subjects":[{"kind":"User","name":"alice"}],"tenants":{}}}')
expect_match "a binding that names no tenant is refused, naming spec.tenants" '"code":422.*spec.tenants' "$out"
out=$(as "$ADMIN" -X POST "$API/accessbindings" -d '{"metadata":{"name":"bad"},"spec":{"role":"owner","subjects":[{"kind":"Team","name":"a"}],"tenants":{"names":["a1"]}}}')
expect_match "an unknown role or subject kind is refused" '"code":422.*spec.role' "$out"
c=$(as "$ADMIN" -o /dev/null -w '%{http_code}' -X POST "$API/accessbindings" -d '{"metadata":{"name":"team-a-edit"},"spec":{"role":"edit","subjects":[{"kind":"Group","name":"team-a"}],"tenants":{"selector":{"team":"a"}}}}')
expect_eq "the admin binds team-a to edit on the tenants labelled team=a" "201" "$c"

ALICE=$(login alice alice-password-1)
BOB=$(login bob bob-password-1)
CAROL=$(login carol carol-password-1)
BOBS=$(as "$BOB" -X POST "$API/users/bob/tokens" -d '{}' | js 'd["secret"]')
expect_match "alice (role none) signs in" '.' "$ALICE"
c=$(code "$BOB" POST /accessbindings '{"metadata":{"name":"mine"},"spec":{"role":"admin","subjects":[{"kind":"User","name":"bob"}],"tenants":{"selector":{}}}}')
expect_eq "bob (edit) cannot bind himself (403: bindings are an admin's)" "403" "$c"

expect_eq "alice reads a1 and its node groups" "200 200 200" \
	"$(code "$ALICE" GET /tenants/a1) $(code "$ALICE" GET /tenants/a1/nodegroups) $(code "$ALICE" GET /tenants/a1/nodegroups/cp)"
expect_eq "but not b1 nor its objects (403)" "403 403 403 403" \
	"$(code "$ALICE" GET /tenants/b1) $(code "$ALICE" GET /tenants/b1/nodegroups) $(code "$ALICE" GET /tenants/b1/nodegroups/cp) $(code "$ALICE" GET /tenants/b1/runs)"
expect_eq "alice changes a1's node group (edit), not b1's" "200 403" \
	"$(code "$ALICE" PATCH /tenants/a1/nodegroups/cp '{"spec":{"count":2}}') $(code "$ALICE" PATCH /tenants/b1/nodegroups/cp '{"spec":{"count":2}}')"
expect_eq "nor deletes b1" "403" "$(code "$ALICE" DELETE /tenants/b1)"
names() { js '" ".join(sorted(i["metadata"].get("tenant", i["metadata"]["name"]) + ("/" + i["metadata"]["name"] if i["metadata"].get("tenant") else "") for i in d["items"]))'; }
expect_eq "alice lists the tenants she may see, a1 and a2 (not b1)" "a1 a2" "$(as "$ALICE" "$API/tenants" | names)"
expect_eq "and the node groups across tenants: theirs only" "a1/cp a2/cp" "$(as "$ALICE" "$API/nodegroups" | names)"
TOK=$(as "$ALICE" "$API/nodegroups?limit=1" | js 'd["metadata"]["continue"]')
expect_eq "page by page (limit=1): a1's, then a2's, and no further page" "a1/cp a2/cp -" \
	"$(as "$ALICE" "$API/nodegroups?limit=1" | names) $(as "$ALICE" "$API/nodegroups?limit=1&continue=$TOK" | js '" ".join(i["metadata"]["tenant"] + "/" + i["metadata"]["name"] for i in d["items"]) + " " + (d["metadata"].get("continue") or "-")')"
expect_eq "a label selector narrows what she sees, never widens it" "a1 a2" "$(as "$ALICE" "$API/tenants?labelSelector=team" | names)"
expect_eq "carol (no binding) lists nothing" "" "$(as "$CAROL" "$API/tenants" | names)"
expect_eq "carol (none, no binding) reaches neither tenant" "403 403" \
	"$(code "$CAROL" GET /tenants/a1) $(code "$CAROL" GET /tenants/b1)"
expect_eq "bob (edit on the installation) keeps his role on both" "200 200" \
	"$(code "$BOB" GET /tenants/a1) $(code "$BOB" GET /tenants/b1/nodegroups/cp)"

# alice's API tokens: by default as far as her bindings reach; a view-capped one stays view
AT=$(as "$ALICE" -X POST "$API/users/alice/tokens" -d '{}' | js 'd["secret"]')
AV=$(as "$ALICE" -X POST "$API/users/alice/tokens" -d '{"spec":{"role":"view"}}' | js 'd["secret"]')
expect_match "alice makes her own tokens" '^rzt_' "$AT $AV"
expect_eq "her token edits a1; her view-capped token reads a1 and cannot edit it" "200 200 403" \
	"$(code "$AT" PATCH /tenants/a1/nodegroups/cp '{"spec":{"count":1}}') $(code "$AV" GET /tenants/a1) $(code "$AV" PATCH /tenants/a1/nodegroups/cp '{"spec":{"count":2}}')"
c=$(as "$ALICE" -o /dev/null -w '%{http_code}' -X POST "$API/users/alice/tokens" -d '{"spec":{"scope":"runner","runner":"x"}}')
expect_eq "alice cannot make a runner token (422)" "422" "$c"

# the tenants' state, once their runs wrote it
reconciled() {
	as "$ADMIN" "$API/tenants" | js '" ".join(sorted(i["metadata"]["name"] for i in d["items"] if any(c.get("type") == "Reconciled" and c.get("status") == "True" for c in i["status"].get("conditions", []))))'
}
for _ in $(seq 1 120); do
	[ "$(reconciled)" = "a1 a2 b1" ] && break
	sleep 0.5
done
expect_eq "the tenants are Reconciled" "a1 a2 b1" "$(reconciled)"
# the summary counts what one may see
sum() { as "$1" "$API/summary?recent=20" | js '"%d %d %s" % (d["tenants"]["total"], d["runs"]["total"], " ".join(sorted({r["metadata"]["tenant"] for r in d["recent"]["failedRuns"] + d["recent"]["activeRuns"]} | {"-"})))'; }
nruns() { as "$1" "$API/runs" | js 'len(d["items"])'; }
# (the summary against the run list, asked again while a run starts between the two)
summary_of() { # TOKEN LISTTOKEN TENANTS: "agree" when the summary counts TENANTS tenants and
	# as many runs as the list shows, else what each says
	for _ in $(seq 1 20); do
		got=$(sum "$1" | cut -d' ' -f1,2)
		want="$3 $(nruns "$2")"
		[ "$got" = "$want" ] && { echo agree; return; }
		sleep 0.5
	done
	echo "summary $got, list $want"
}
expect_eq "/api/v1/summary as alice: her two tenants and their runs only" "agree" "$(summary_of "$ALICE" "$AT" 2)"
expect_eq "as the admin: three tenants, every run" "agree" "$(summary_of "$ADMIN" "$ADMIN" 3)"
expect_eq "(alice sees fewer runs than there are)" "yes" "$([ "$(nruns "$AT")" -lt "$(nruns "$ADMIN")" ] && echo yes)"
expect_eq "her recent runs are her tenants' only" "" "$(sum "$ALICE" | cut -d' ' -f3- | tr ' ' '\n' | grep -v -e '^-$' -e '^a1$' -e '^a2$')"
expect_eq "carol's summary counts nothing" "0 0 -" "$(sum "$CAROL")"
state() { curl -s -o /dev/null -w '%{http_code}' -u "x:$1" "$BASE/tfstate/$2"; }
expect_eq "alice's token reads a1's TF state, not b1's; bob's reads b1's" "200 403 200" \
	"$(state "$AT" a1) $(state "$AT" b1) $(state "$BOBS" b1)"
# terraform's own client: terraform_remote_state of another team's tenant
remote_state() { # TOKEN TENANT: terraform plan reading that tenant's state
	d="$WORK/rs-$2"
	rm -rf "$d"
	mkdir -p "$d"
	cat >"$d/main.tf" <<TFEOF
data "terraform_remote_state" "other" {
  backend = "http"
  config = {
    address  = "$BASE/tfstate/$2"
    username = "x"
    password = "$1"
    skip_cert_verification = true
  }
}
output "keys" { value = keys(data.terraform_remote_state.other.outputs) }
TFEOF
	(cd "$d" && "$TF" init -input=false -no-color >/dev/null 2>&1 && "$TF" plan -input=false -no-color) >"$d/out" 2>&1
	echo $?
}
expect_eq "terraform_remote_state of b1 with alice's token fails" "1" "$(remote_state "$AT" b1)"
# (terraform's http backend says a 403 so)
expect_match "saying the state backend refused it" 'HTTP remote state endpoint invalid auth' "$(cat "$WORK/rs-b1/out")"
expect_eq "of a1, her team's tenant, it works" "0" "$(remote_state "$AT" a1)"

# kubectl with alice's token
k() { timeout 30 kubectl --server="$BASE" --token="$AT" --certificate-authority="$CA" --request-timeout=20s "$@" 2>&1; }
expect_match "kubectl get nodegroups -n a1 as alice" '^cp ' "$(k get nodegroups -n a1 --no-headers)"
expect_match "kubectl get nodegroups -n b1 as alice: Forbidden" 'Forbidden|forbidden' "$(k get nodegroups -n b1)"
expect_eq "kubectl get nodegroups -A as alice: a1's and a2's (a Table)" "a1 a2" \
	"$(k get nodegroups -A --no-headers | awk '{ print $1 }' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "kubectl get tenants as alice" "a1 a2" \
	"$(k get tenants --no-headers | awk '{ print $1 }' | sort | tr '\n' ' ' | sed 's/ $//')"
# kubectl auth can-i / whoami: the same rules (kubectl sends these reviews as protobuf)
can() { # TOKEN can-i-args...: yes or no
	t=$1
	shift
	timeout 30 kubectl --server="$BASE" --token="$t" --certificate-authority="$CA" auth can-i "$@" 2>/dev/null | cut -d' ' -f1
}
expect_eq "kubectl auth can-i: create nodegroups in a1 yes, in b1 no; patch tenant a1 yes, delete b1 no" \
	"yes no yes no" \
	"$(can "$AT" create nodegroups -n a1) $(can "$AT" create nodegroups -n b1) $(can "$AT" patch tenants/a1) $(can "$AT" delete tenants/b1)"
expect_eq "list nodegroups across tenants yes (what she may see), create users no, get /version yes" \
	"yes no yes" "$(can "$AT" list nodegroups -A) $(can "$AT" create users) $(can "$AT" get /version)"
expect_match "a no says why" 'no - create nodegroups in tenant b1 needs the edit role there; you have none' \
	"$(k auth can-i create nodegroups -n b1)"
expect_eq "her view-capped token: get in a1 yes, create there no" "yes no" \
	"$(can "$AV" get nodegroups -n a1) $(can "$AV" create nodegroups -n a1)"
expect_match "kubectl auth can-i --list -n a1: node groups with create, read and delete" \
	'^nodegroups\.rezuscloud\.io +\[\] +\[\] +\[get list watch create update patch delete\]' "$(k auth can-i --list -n a1)"
expect_eq "and nothing of b1's" "" "$(k auth can-i --list -n b1 | grep '^nodegroups')"
out=$(k auth whoami)
expect_match "kubectl auth whoami: alice" '^Username +alice$' "$out"
expect_match "with her groups" '^Groups +\[team-a system:authenticated\]$' "$out"
expect_eq "bob (edit): can-i create nodegroups in b1 yes, create users no" "yes no" \
	"$(can "$BOBS" create nodegroups -n b1) $(can "$BOBS" create users)"
# Debian's python3-kubernetes, as alice: the lists she may see, and a review
cat >"$WORK/py.py" <<'PYEOF'
import sys
from kubernetes import client
c = client.Configuration()
c.host, c.ssl_ca_cert = sys.argv[1], sys.argv[2]
c.api_key = {"authorization": "Bearer " + sys.argv[3]}
api = client.ApiClient(c)
objs = client.CustomObjectsApi(api)
print(" ".join(sorted(i["metadata"]["name"] for i in objs.list_cluster_custom_object("rezuscloud.io", "v1", "tenants")["items"])))
r = client.AuthorizationV1Api(api).create_self_subject_access_review(client.V1SelfSubjectAccessReview(
    spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
        namespace="b1", verb="get", group="rezuscloud.io", resource="nodegroups"))))
print("b1:", "yes" if r.status.allowed else "no")
try:
    objs.get_namespaced_custom_object("rezuscloud.io", "v1", "b1", "nodegroups", "cp")
    print("read b1")
except client.exceptions.ApiException as e:
    print("b1 get:", e.status)
PYEOF
expect_eq "the Python client as alice: tenants a1 a2; can she get b1's node groups: no; get one: 403" \
	"a1 a2|b1: no|b1 get: 403" "$(/usr/bin/python3 "$WORK/py.py" "$BASE" "$CA" "$AT" 2>&1 | tr '\n' '|' | sed 's/|$//')"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $AT" \
	-H 'Content-Type: application/vnd.kubernetes.protobuf' --data-binary 'k8s' "$BASE/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
expect_eq "a malformed protobuf review: 400" "400" "$code"
out=$(curl -s -X POST -H "Authorization: Bearer $AT" -H 'Content-Type: application/json' \
	-d '{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"namespace":"a2","verb":"delete","group":"rezuscloud.io","resource":"nodegroups","name":"cp"}}}' \
	"$BASE/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
expect_match "a JSON review (the Python client's): allowed, 201" '"status":\{"allowed":true' "$out"

# A watch across tenants: the current objects and the changes of a1 and a2 only; once the
# binding is gone, nothing more.
label() { # TENANT VALUE: the admin labels the tenant's node group (200)
	curl -s -o /dev/null -w '%{http_code}' -X PATCH -H "Authorization: Bearer $ADMIN" \
		-H 'Content-Type: application/merge-patch+json' "$API/tenants/$1/nodegroups/cp" \
		-d "{\"metadata\":{\"labels\":{\"seen\":\"$2\"}}}"
}
curl -s -N --max-time 8 -H "Authorization: Bearer $AT" -H "Accept: application/json" "$API/nodegroups?watch=true" >"$WORK/watch.out" &
WATCH=$!
sleep 1.5
expect_eq "the admin labels b1's and a2's node groups" "200 200" "$(label b1 b1) $(label a2 a2)"
sleep 1
as "$ADMIN" -o /dev/null -X DELETE "$API/accessbindings/team-a-edit"
sleep 1
expect_eq "then a1's, the binding gone" "200" "$(label a1 a1-after)"
wait "$WATCH" 2>/dev/null
cat >"$WORK/events.py" <<'PY'
import json, sys
ev = []
for line in open(sys.argv[1]):
    line = line.strip()
    if line:
        e = json.loads(line)
        m = e["object"]["metadata"]
        ev.append((e["type"], m.get("tenant", "?"), (m.get("labels") or {}).get("seen", "")))
out = [" ".join("%s:%s" % (t, n) for t, n, _ in ev[:2])]
out.append("a2-change" if ("MODIFIED", "a2", "a2") in ev else "no-a2-change")
out.append("b1-leaked" if any(n == "b1" for _, n, _ in ev) else "no-b1")
out.append("late-a1-leaked" if any(l == "a1-after" for _, _, l in ev) else "nothing-after")
print(" ".join(out))
PY
expect_eq "the watch showed a1 and a2, then a2's change; nothing of b1, nothing after the binding went" \
	"ADDED:a1 ADDED:a2 a2-change no-b1 nothing-after" "$(python3 "$WORK/events.py" "$WORK/watch.out")"
c=$(as "$ADMIN" -o /dev/null -w '%{http_code}' -X POST "$API/accessbindings" -d '{"metadata":{"name":"team-a-edit"},"spec":{"role":"edit","subjects":[{"kind":"Group","name":"team-a"}],"tenants":{"selector":{"team":"a"}}}}')
expect_eq "(the binding made again)" "201" "$c"

# the binding deleted: alice's access ends at once, for a watch on a1 already open too
curl -s -N --max-time 4 -H "Authorization: Bearer $AT" -H "Accept: application/json" "$API/tenants/a1/nodegroups?watch=true" >"$WORK/watch1.out" &
WATCH=$!
sleep 1
c=$(as "$ADMIN" -o /dev/null -w '%{http_code}' -X DELETE "$API/accessbindings/team-a-edit")
expect_eq "the admin deletes the binding" "200" "$c"
expect_eq "alice's session and token reach a1 no more" "403 403 403" \
	"$(code "$ALICE" GET /tenants/a1) $(code "$AT" GET /tenants/a1/nodegroups) $(state "$AT" a1)"
expect_eq "the admin labels a1's node group" "200" "$(label a1 a1-last)"
wait "$WATCH" 2>/dev/null
expect_eq "the watch on a1 opened before showed a1's node group, and not that change" "ADDED:a1 0" \
	"$(python3 "$WORK/events.py" "$WORK/watch1.out" | cut -d' ' -f1) $(grep -c a1-last "$WORK/watch1.out")"
# a binding by name, to the user
c=$(as "$ADMIN" -o /dev/null -w '%{http_code}' -X POST "$API/accessbindings" -d '{"metadata":{"name":"alice-b1"},"spec":{"role":"view","subjects":[{"kind":"User","name":"alice"}],"tenants":{"names":["b1"]}}}')
expect_eq "a view binding of alice on b1 by name" "201" "$c"
expect_eq "alice now reads b1, cannot change it, and a1 stays closed" "200 403 403" \
	"$(code "$ALICE" GET /tenants/b1/nodegroups/cp) $(code "$ALICE" PATCH /tenants/b1/nodegroups/cp '{"spec":{"count":2}}') $(code "$ALICE" GET /tenants/a1)"
# a user with role none looks after itself: whoami, its password, rezusctl login (which keeps
# a token and logs the session out), logout
CTL="$top_builddir/rezusctl"
expect_match "alice's whoami (role none)" '"role":"none"' "$(as "$ALICE" "$API/auth/whoami")"
c=$(as "$ALICE" -o /dev/null -w '%{http_code}' -X POST "$API/auth/password" -d '{"currentPassword":"alice-password-1","newPassword":"alice-password-2"}')
expect_eq "alice changes her own password" "200" "$c"
printf 'alice-password-2\n' | "$CTL" --certificate-authority "$CA" login "$BASE" --username alice --password-stdin >"$WORK/ctl.out" 2>&1
expect_eq "rezusctl login as alice with the new password" "0" "$?"
expect_match "rezusctl get nodegroups -t b1 as alice (her view binding)" '^cp +controlplane' \
	"$("$CTL" --certificate-authority "$CA" get nodegroups -t b1 2>&1)"
expect_match "rezusctl get nodegroups -t a1 as alice: refused (team a's binding is gone)" 'user "alice" with role none cannot list nodegroups' \
	"$("$CTL" --certificate-authority "$CA" get nodegroups -t a1 2>&1)"
expect_eq "rezusctl get tenants as alice: b1 only" "tenant/b1" \
	"$("$CTL" --certificate-authority "$CA" get tenants -o name 2>&1 | tr '\n' ' ' | sed 's/ $//')"
A2=$(login alice alice-password-2)
c=$(as "$A2" -o /dev/null -w '%{http_code}' -X POST "$API/auth/logout")
expect_eq "alice logs out (200), and that session is over (401)" "200 401" "$c $(code "$A2" GET /auth/whoami)"
expect_eq "no password or token in the log" "0" \
	"$(grep -c -e alice-password-1 -e alice-password-2 -e "$AT" -e tenancy-admin-pw "$WORK/daemon.log")"
stop_proc "$DAEMON_PID" "the daemon"
done_testing
