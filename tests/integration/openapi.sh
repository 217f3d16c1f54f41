#!/bin/sh
# The OpenAPI documents, read from a running daemon by the real tools: @redocly/cli lints them
# with no error, openapi-typescript turns the document into types that tsc --strict compiles
# with a small typed client (tests/integration/openapi-client.ts, which then runs against the
# daemon), and kubectl reads the /openapi/v3 index over TLS and, where the daemon serves the
# Kubernetes discovery, applies a Tenant with validation on and explains tenants.spec.
# The npm tools come from tools/install-deps (build/node of the source tree); kubectl, nginx
# and openssl from the system. A missing tool fails the test.
. "${top_srcdir:-.}/tests/integration/lib.sh"

NODE_BIN="$top_srcdir/build/node/node_modules/.bin"
PW=openapi-test-password

for tool in "$NODE_BIN/redocly" "$NODE_BIN/openapi-typescript" "$NODE_BIN/tsc"; do
	if [ ! -x "$tool" ]; then
		not_ok "$(basename "$tool") is installed" "missing $tool: run tools/install-deps"
		done_testing
		exit 1
	fi
done
for tool in node kubectl nginx openssl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "$tool is installed" "missing $tool: run tools/install-deps"
		done_testing
		exit 1
	fi
done

cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=$PW start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(tail -n 5 "$WORK/daemon.log")"
	done_testing
	exit 1
fi
BASE="http://127.0.0.1:$PORT"
TOKEN=$(curl -s -H 'Content-Type: application/json' \
	-d "{\"username\":\"admin\",\"password\":\"$PW\"}" "$BASE/api/v1/auth/login" |
	sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
AUTH="Authorization: Bearer $TOKEN"
api() { curl -s -H "$AUTH" -H 'Content-Type: application/json' "$@"; }

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
if "$NODE_BIN/tsc" --strict --noEmitOnError --target es2020 --module commonjs --lib es2020,dom \
	--outDir "$WORK/ts/out" "$WORK/ts/client.ts" >"$WORK/tsc.out" 2>&1; then
	ok "the types and the typed client compile with tsc --strict"
else
	not_ok "the types and the typed client compile with tsc --strict" "$(head -n 20 "$WORK/tsc.out")"
fi
out=$(node "$WORK/ts/out/client.js" "$BASE" "$TOKEN" beta 2>&1)
expect_match "the client lists {tenant}'s node groups and reads providerConfig" \
	'^cp role=controlplane providerConfig=addressPrefix,notReadyAfter$' "$out"

# ---- kubectl, over TLS
# A stand-in until the daemon serves TLS itself (server.tls.*): nginx terminates TLS with a
# self-signed certificate made here and forwards to the daemon's plain HTTP on loopback.
# kubectl sends a bearer token only over https. To test the daemon's own TLS, replace this
# function: it must leave KUBE_SERVER (an https URL) and KUBE_CA (the CA file) set.
start_tls_front() {
	mkdir -p "$WORK/tls/tmp"
	chmod 755 "$WORK" "$WORK/tls"
	chmod 1777 "$WORK/tls/tmp"
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/tls/key.pem" \
		-out "$WORK/tls/cert.pem" >"$WORK/tls/openssl.out" 2>&1 || return 1
	for _ in 1 2 3 4 5 6 7 8; do
		TLS_PORT=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000))
		cat >"$WORK/tls/nginx.conf" <<-CONF
		daemon off;
		worker_processes 1;
		pid $WORK/tls/nginx.pid;
		error_log $WORK/tls/error.log warn;
		events { worker_connections 256; }
		http {
			access_log $WORK/tls/access.log;
			client_body_temp_path $WORK/tls/tmp/body;
			proxy_temp_path $WORK/tls/tmp/proxy;
			fastcgi_temp_path $WORK/tls/tmp/fastcgi;
			uwsgi_temp_path $WORK/tls/tmp/uwsgi;
			scgi_temp_path $WORK/tls/tmp/scgi;
			server {
				listen 127.0.0.1:$TLS_PORT ssl;
				ssl_certificate $WORK/tls/cert.pem;
				ssl_certificate_key $WORK/tls/key.pem;
				location / {
					proxy_pass http://127.0.0.1:$PORT;
					proxy_http_version 1.1;
					proxy_buffering off;
					proxy_request_buffering off;
					proxy_read_timeout 30s;
				}
			}
		}
		CONF
		nginx -p "$WORK/tls" -e "$WORK/tls/error.log" -c "$WORK/tls/nginx.conf" \
			>/dev/null 2>>"$WORK/tls/nginx.stderr" &
		NGINX_PID=$!
		for _ in $(seq 1 100); do
			if curl -s --cacert "$WORK/tls/cert.pem" -o /dev/null "https://127.0.0.1:$TLS_PORT/healthz"; then
				KUBE_SERVER="https://127.0.0.1:$TLS_PORT"
				KUBE_CA="$WORK/tls/cert.pem"
				return 0
			fi
			kill -0 "$NGINX_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill "$NGINX_PID" 2>/dev/null
		wait "$NGINX_PID" 2>/dev/null
	done
	return 1
}
stop_tls_front() {
	[ -z "${NGINX_PID:-}" ] || { kill "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null; }
}

if start_tls_front; then
	ok "a TLS front (stand-in: nginx) answers at $KUBE_SERVER"
else
	not_ok "a TLS front (stand-in: nginx) answers" "$(cat "$WORK/tls/"*.out "$WORK/tls/nginx.stderr" "$WORK/tls/error.log" 2>/dev/null | tail -n 5)"
fi
cat >"$WORK/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: rezus
  cluster: {server: "$KUBE_SERVER", certificate-authority: "$KUBE_CA"}
users:
- name: admin
  user: {token: "$TOKEN"}
contexts:
- name: rezus
  context: {cluster: rezus, user: admin}
current-context: rezus
KC
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
if [ "$(api -o /dev/null -w '%{http_code}' "$BASE/apis")" = 200 ]; then
	out=$(kc apply -f "$WORK/tenant.yaml" 2>&1)
	expect_match "kubectl apply of a Tenant with validation on (no --validate=false)" 'tenant.rezuscloud.io/gamma (created|configured|unchanged)' "$out"
	if grep -q 'GET /openapi/v3/apis/rezuscloud.io/v1?hash=' "$WORK/tls/access.log"; then
		ok "kubectl read the group-version document to validate"
	else
		not_ok "kubectl read the group-version document to validate" "$(tail -n 10 "$WORK/tls/access.log")"
	fi
	out=$(kc apply -f "$WORK/typo.yaml" 2>&1)
	expect_match "an unknown field is refused, named" 'clusterProvder' "$out"
	out=$(kc explain tenants.spec 2>&1)
	expect_match "kubectl explain tenants.spec" 'clusterProvider' "$out"
else
	# /apis (discovery) is another part of the API; kubectl apply and explain need it
	for t in "kubectl apply of a Tenant with validation on" "kubectl read the group-version document" \
		"an unknown field is refused, named" "kubectl explain tenants.spec"; do
		tap_n=$((tap_n + 1))
		echo "ok $tap_n - $t # SKIP this daemon serves no /apis discovery"
	done
fi
stop_tls_front

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 15
expect_eq "the daemon stops cleanly" 0 "$EXIT_STATUS"
done_testing
