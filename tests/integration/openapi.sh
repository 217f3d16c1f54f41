#!/bin/sh
# The OpenAPI documents, read from a running daemon by the real tools: @redocly/cli lints them
# with no error; openapi-typescript turns the document into types with which a client on
# openapi-fetch (tests/integration/openapi-client.ts) compiles with tsc --strict and no cast,
# and @hey-api/openapi-ts generates a client that another (openapi-heyapi.ts) compiles with;
# both then list, create, read and patch node groups of the daemon; and kubectl, over the
# daemon's TLS, reads the /openapi/v3 index, applies a Tenant with validation on (no
# --validate=false) and explains tenants.spec.
# The npm tools come from tools/install-deps (build/node of the source tree), kubectl from
# the system. A missing tool fails the test.
. "${top_srcdir:-.}/tests/integration/k8sfront.sh"

NODE_BIN="${NODE_TREE:-$top_srcdir/build/node}/node_modules/.bin"
PW=openapi-test-password

for tool in "$NODE_BIN/redocly" "$NODE_BIN/openapi-typescript" "$NODE_BIN/tsc" \
	"$NODE_BIN/openapi-ts" "$NODE_BIN/../openapi-fetch/package.json"; do
	if [ ! -e "$tool" ]; then
		not_ok "$(basename "$tool") is installed" "missing $tool: run tools/install-deps"
		done_testing
		exit 1
	fi
done
for tool in node kubectl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "$tool is installed" "missing $tool: run tools/install-deps"
		done_testing
		exit 1
	fi
done

if k8s_daemon "$PW"; then
	ok "the daemon starts, serving TLS"
else
	not_ok "the daemon starts, serving TLS" "$(tail -n 5 "$WORK/daemon.log")"
	done_testing
	exit 1
fi
BASE="$K8S_URL"
AUTH="Authorization: Bearer $TOKEN"
api() { curl -s --cacert "$K8S_CA" -H "$AUTH" -H 'Content-Type: application/json' "$@"; }

# ---- the index and the documents it lists, as kubectl finds them
api -o "$WORK/index.json" "$BASE/openapi/v3"
all_url=$(node -e 'const i=require(process.argv[1]);console.log(i.paths["api/v1"].serverRelativeURL)' "$WORK/index.json" 2>&1)
gv_url=$(node -e 'const i=require(process.argv[1]);console.log(i.paths["apis/rezuscloud.io/v1"].serverRelativeURL)' "$WORK/index.json" 2>&1)
expect_match "the index lists the document of every route" '^/openapi/v3/api/v1\?hash=[0-9A-F]{64}$' "$all_url"
expect_match "and the group-version document" '^/openapi/v3/apis/rezuscloud.io/v1\?hash=[0-9A-F]{64}$' "$gv_url"
api -o "$WORK/all.json" "$BASE$all_url"
api -o "$WORK/gv.json" "$BASE$gv_url"
expect_eq "the document's licence is the project's (LICENSE: the MIT licence)" "MIT" \
	"$(node -e 'const d=require(process.argv[1]);console.log(d.info.license.name)' "$WORK/all.json" 2>&1)"

# ---- what the document says, against what the daemon answers
facts=$(node -e '
const d = require(process.argv[1]);
const s = d.components.schemas;
const del = d.paths["/api/v1/tenants/{name}"].delete.responses;
const ops = [];
for (const [p, item] of Object.entries(d.paths))
	for (const [m, o] of Object.entries(item)) if (m !== "parameters") ops.push(o);
console.log([
	"delete=" + Object.keys(del).filter((c) => c < 300).join(","),
	"causes=" + s.StatusDetails.properties.causes.items.$ref,
	"lock=" + Object.keys(d.paths["/tfstate/{tenant}"]["x-rezus-methods"]).join(","),
	"tfstate=" + Object.keys(d.paths["/tfstate/{tenant}"].get.security[0]),
	"providerConfig=" + s.NodeGroup.properties.spec.properties.providerConfig.additionalProperties,
	"ids=" + (new Set(ops.map((o) => o.operationId)).size === ops.length),
	"paths=" + Object.keys(d.paths).length,
	"group=" + Object.keys(d.paths).filter((p) => p.startsWith("/apis/rezuscloud.io/")).length,
	"list=" + Object.keys(d.paths["/api/v1/tenants/{tenant}/nodegroups"].get.responses["200"].content),
	"watch=" + d.paths["/api/v1/watch/tenants/{tenant}/nodegroups"].get.operationId,
].join(" "));' "$WORK/all.json" 2>&1)
echo "# $facts"
expect_match "a tenant's DELETE answers 202 while its destroy runs, 200 once gone" 'delete=200,202 ' "$facts"
expect_match "Status details carry causes" 'causes=#/components/schemas/StatusCause ' "$facts"
expect_match "/tfstate's LOCK and UNLOCK are described" 'lock=LOCK,UNLOCK ' "$facts"
expect_match "/tfstate takes basic auth" 'tfstate=basic ' "$facts"
expect_match "providerConfig is an open object" 'providerConfig=true ' "$facts"
expect_match "operationIds are unique" 'ids=true ' "$facts"
expect_match "every route once, at its /api/v1 path: none at the group's" ' group=0 ' "$facts"
expect_match "a list answers the list alone" ' list=application/json ' "$facts"
expect_match "its stream is an operation of its own" ' watch=watchNodeGroupList$' "$facts"
gv_paths=$(node -e 'const d=require(process.argv[1]);const p=Object.keys(d.paths);console.log(p.length+" "+p.filter((x)=>!x.startsWith("/apis/rezuscloud.io/v1/")).length)' "$WORK/gv.json" 2>&1)
expect_match "the group-version document holds the group paths only" '^[1-9][0-9]+ 0$' "$gv_paths"
# a route the old document missed, fetched as the document describes it
api -X POST "$BASE/api/v1/tenants" \
	-d '{"metadata":{"name":"acme"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$BASE/api/v1/tenants/acme/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim","providerConfig":{"addressPrefix":"10.20.0","notReadyAfter":9000}}}' >/dev/null
code=$(api -o /dev/null -w '%{http_code}' -X DELETE "$BASE/api/v1/tenants/acme")
expect_eq "and the daemon's DELETE of a tenant does answer 202" 202 "$code"
api -X POST "$BASE/api/v1/tenants" \
	-d '{"metadata":{"name":"beta"},"spec":{"clusterProvider":"sim"}}' >/dev/null
api -X POST "$BASE/api/v1/tenants/beta/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim","providerConfig":{"addressPrefix":"10.20.0","notReadyAfter":9000}}}' >/dev/null

# ---- @redocly/cli: no errors (redocly.yaml: recommended-strict, warnings are errors)
for doc in all gv; do
	if "$NODE_BIN/redocly" lint --config "$top_srcdir/redocly.yaml" "$WORK/$doc.json" \
		>"$WORK/lint-$doc.out" 2>&1; then
		ok "redocly lint of $doc.json passes with no errors"
	else
		not_ok "redocly lint of $doc.json passes with no errors" "$(grep -E 'error|Error|rule' "$WORK/lint-$doc.out" | head -n 20)"
	fi
	echo "# redocly $doc.json: $(grep -E 'valid|Validation|warning' "$WORK/lint-$doc.out" | tr '\n' ' ')"
done

# ---- openapi-typescript + openapi-fetch, then tsc --strict with the typed client
mkdir -p "$WORK/ts"
ln -s "$(cd "$NODE_BIN/.." && pwd)" "$WORK/ts/node_modules" # openapi-fetch, for tsc and node
cp "$top_srcdir/tests/integration/openapi-client.ts" "$WORK/ts/client.ts"
cp "$top_srcdir/tests/integration/openapi-heyapi.ts" "$WORK/ts/heyclient.ts"
if "$NODE_BIN/openapi-typescript" "$WORK/all.json" -o "$WORK/ts/api.d.ts" >"$WORK/ots.out" 2>&1; then
	ok "openapi-typescript generates types"
else
	not_ok "openapi-typescript generates types" "$(cat "$WORK/ots.out")"
fi
# webhooks and $defs are the generator's own empty exports; no type of ours may be empty
empty=$(grep -v '^export type' "$WORK/ts/api.d.ts" | grep -c 'Record<string, never>')
expect_eq "no schema of ours becomes Record<string, never>" 0 "$empty"
[ "$empty" = 0 ] || grep -v '^export type' "$WORK/ts/api.d.ts" | grep -n -B3 'Record<string, never>' | head -20 | sed 's/^/# /'
# no "x as T", "<T>x" or "x!": comments aside
casts=$(cat "$WORK/ts/client.ts" "$WORK/ts/heyclient.ts" | sed 's://.*$::' |
	grep -nE '\bas [A-Za-z{(]|[=(,:] *<[A-Za-z]+>|[]A-Za-z)]!\.')
expect_eq "the typed clients cast nothing" "" "$casts"
# dom.iterable: the generated client iterates URLSearchParams
tsc_strict() {
	"$NODE_BIN/tsc" --strict --noEmitOnError --target es2020 --module commonjs \
		--lib es2020,dom,dom.iterable "$@"
}
if tsc_strict --outDir "$WORK/ts/out" "$WORK/ts/client.ts" >"$WORK/tsc.out" 2>&1; then
	ok "the types and the openapi-fetch client compile with tsc --strict"
else
	not_ok "the types and the openapi-fetch client compile with tsc --strict" "$(head -n 20 "$WORK/tsc.out")"
fi
out=$(NODE_EXTRA_CA_CERTS="$K8S_CA" node "$WORK/ts/out/client.js" "$BASE" "$TOKEN" beta 2>&1)
echo "$out" | sed 's/^/# /'
expect_match "the client lists {tenant}'s node groups and reads providerConfig" \
	'^cp role=controlplane providerConfig=addressPrefix,notReadyAfter$' "$out"
expect_match "creates one: 201, with the server's fields" \
	'^created=ts-workers code=201 generation=1 tenant=beta$' "$out"
expect_match "reads it back" '^got=ts-workers count=1 uid=true$' "$out"
expect_match "patches it (a merge patch)" '^patched count=3 generation=2$' "$out"
expect_match "reads a refused write's Status and the field at fault" \
	'^refused code=422 reason=Invalid causes=spec.count$' "$out"
expect_match "and a missing object's" '^missing code=404 reason=NotFound$' "$out"
expect_match "and watches, by the watch operation" '^watched ADDED \{.*"name":"ts-workers"' "$out"
expect_eq "the daemon holds what the client wrote" 3 \
	"$(api "$BASE/api/v1/tenants/beta/nodegroups/ts-workers" | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s).spec.count))')"

# ---- @hey-api/openapi-ts: a generated SDK, compiled with its client
if "$NODE_BIN/openapi-ts" -i "$WORK/all.json" -o "$WORK/ts/hey" -c @hey-api/client-fetch \
	>"$WORK/hey.out" 2>&1; then
	ok "@hey-api/openapi-ts generates a client"
else
	not_ok "@hey-api/openapi-ts generates a client" "$(tail -n 20 "$WORK/hey.out")"
fi
expect_eq "with one function per operation: no group-path twin" "" \
	"$(grep -o 'export const [A-Za-z]*ApisRezuscloud[A-Za-z]*' "$WORK/ts/hey/sdk.gen.ts" | head -n 3)"
if tsc_strict --outDir "$WORK/ts/outh" "$WORK/ts/heyclient.ts" >"$WORK/tsch.out" 2>&1; then
	ok "the generated client and its user compile with tsc --strict"
else
	not_ok "the generated client and its user compile with tsc --strict" "$(head -n 20 "$WORK/tsch.out")"
fi
out=$(NODE_EXTRA_CA_CERTS="$K8S_CA" node "$WORK/ts/outh/heyclient.js" "$BASE" "$TOKEN" beta 2>&1)
echo "$out" | sed 's/^/# /'
expect_match "it creates a node group" '^hey created=hey-workers code=201$' "$out"
expect_match "patches and reads it" '^hey count=4 generation=2$' "$out"
expect_match "and lists it among the others" '^hey listed=cp,hey-workers,ts-workers$' "$out"

# ---- kubectl, over the daemon's TLS (it sends a bearer token only over https)
kubeconfig "$WORK/kubeconfig"
kc() { HOME="$WORK" KUBECONFIG="$WORK/kubeconfig" kubectl --request-timeout=20s "$@"; }
idx=$(kc get --raw /openapi/v3 2>&1)
expect_match "kubectl reads the /openapi/v3 index with its token" '"apis/rezuscloud.io/v1":\{"serverRelativeURL"' "$idx"

cat >"$WORK/tenant.yaml" <<'YAML'
apiVersion: rezuscloud.io/v1
kind: Tenant
metadata:
  name: gamma
spec:
  clusterProvider: sim
YAML
cat >"$WORK/typo.yaml" <<'YAML'
apiVersion: rezuscloud.io/v1
kind: Tenant
metadata:
  name: delta
spec:
  clusterProvider: sim
  clusterProvder: typo
YAML
out=$(kc apply -v=6 -f "$WORK/tenant.yaml" 2>&1)
expect_match "kubectl apply of a Tenant with validation on (no --validate=false)" 'tenant.rezuscloud.io/gamma (created|configured|unchanged)' "$out"
# with the document's fieldValidation parameter kubectl leaves validation to the server
expect_match "kubectl read the group-version document to validate" 'GET https://[^ ]*/openapi/v3/apis/rezuscloud.io/v1\?hash=[0-9A-F]+[^ ]* 200' "$out"
expect_match "and asked the server to validate strictly" 'POST https://[^ ]*/tenants\?[^ ]*fieldValidation=Strict' "$out"
out=$(kc apply -f "$WORK/typo.yaml" 2>&1)
expect_match "an unknown field is refused, named" 'clusterProvder' "$out"
out=$(kc explain tenants.spec 2>&1)
expect_match "kubectl explain tenants.spec" 'clusterProvider' "$out"

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" 0 "$EXIT_STATUS"
done_testing
