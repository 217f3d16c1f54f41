#!/bin/sh
# The OpenAPI documents, read from a running daemon by the real tools: @redocly/cli lints them
# with no error, openapi-typescript turns the document into types that tsc --strict compiles
# with a small typed client (tests/integration/openapi-client.ts, which then runs against the
# daemon), and kubectl, over the daemon's TLS, reads the /openapi/v3 index, applies a Tenant
# with validation on (no --validate=false) and explains tenants.spec.
# The npm tools come from tools/install-deps (build/node of the source tree), kubectl from
# the system. A missing tool fails the test.
. "${top_srcdir:-.}/tests/integration/k8sfront.sh"

NODE_BIN="${NODE_TREE:-$top_srcdir/build/node}/node_modules/.bin"
PW=openapi-test-password

for tool in "$NODE_BIN/redocly" "$NODE_BIN/openapi-typescript" "$NODE_BIN/tsc"; do
	if [ ! -x "$tool" ]; then
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
].join(" "));' "$WORK/all.json" 2>&1)
echo "# $facts"
expect_match "a tenant's DELETE answers 202 while its destroy runs, 200 once gone" 'delete=200,202 ' "$facts"
expect_match "Status details carry causes" 'causes=#/components/schemas/StatusCause ' "$facts"
expect_match "/tfstate's LOCK and UNLOCK are described" 'lock=LOCK,UNLOCK ' "$facts"
expect_match "/tfstate takes basic auth" 'tfstate=basic ' "$facts"
expect_match "providerConfig is an open object" 'providerConfig=true ' "$facts"
expect_match "operationIds are unique" 'ids=true ' "$facts"
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

# ---- openapi-typescript, then tsc --strict with the typed client
mkdir -p "$WORK/ts"
cp "$top_srcdir/tests/integration/openapi-client.ts" "$WORK/ts/client.ts"
if "$NODE_BIN/openapi-typescript" "$WORK/all.json" -o "$WORK/ts/api.d.ts" >"$WORK/ots.out" 2>&1; then
	ok "openapi-typescript generates types"
else
	not_ok "openapi-typescript generates types" "$(cat "$WORK/ots.out")"
fi
# webhooks and $defs are the generator's own empty exports; no type of ours may be empty
empty=$(grep -v '^export type' "$WORK/ts/api.d.ts" | grep -c 'Record<string, never>')
expect_eq "no schema of ours becomes Record<string, never>" 0 "$empty"
[ "$empty" = 0 ] || grep -v '^export type' "$WORK/ts/api.d.ts" | grep -n -B3 'Record<string, never>' | head -20 | sed 's/^/# /'
if "$NODE_BIN/tsc" --strict --noEmitOnError --target es2020 --module commonjs --lib es2020,dom \
	--outDir "$WORK/ts/out" "$WORK/ts/client.ts" >"$WORK/tsc.out" 2>&1; then
	ok "the types and the typed client compile with tsc --strict"
else
	not_ok "the types and the typed client compile with tsc --strict" "$(head -n 20 "$WORK/tsc.out")"
fi
out=$(NODE_EXTRA_CA_CERTS="$K8S_CA" node "$WORK/ts/out/client.js" "$BASE" "$TOKEN" beta 2>&1)
expect_match "the client lists {tenant}'s node groups and reads providerConfig" \
	'^cp role=controlplane providerConfig=addressPrefix,notReadyAfter$' "$out"

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
