#!/bin/sh
# TLS on the listen address with real clients: curl and openssl s_client (TLS 1.2 and 1.3,
# ALPN, TLS 1.1 refused), plain HTTP on the TLS port refused in clear text, an expired and a
# wrong-host certificate refused by curl, a certificate reload on SIGHUP under keep-alive and
# new-connection load losing no request, a bad certificate refused at reload, kubectl with a
# bearer token, rezusctl login and get, the WebUI's login seed and session cookies Secure
# (and HttpOnly, SameSite) over TLS, a sim tenant's tofu run through the https state
# backend; a self-signed certificate with its fingerprint logged, client certificates
# required by server.tls.client_ca_file; plain HTTP refused off loopback.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
KUBECTL=$(command -v kubectl || echo /usr/local/bin/kubectl)
for tool in openssl curl "$KUBECTL" "$TF"; do
	if [ -z "$tool" ] || ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "the clients this test drives are installed (tools/install-deps)" "missing: ${tool:-tofu/terraform}"
		done_testing
		exit 1
	fi
done
CTL="$top_builddir/rezusctl"
export HOME="$WORK/home"
mkdir -p "$HOME" "$WORK/pki" "$WORK/plugins"
unset REZUSCLOUD_SERVER REZUSCLOUD_TOKEN KUBECONFIG
ln -s "$top_builddir/plugins/.libs/sim.so" "$WORK/plugins/sim.so"

# --- certificates: a CA, leaves A and B, an expired one, one for another host, a client -----
P="$WORK/pki"
cat >"$P/ca.cnf" <<CONF
[ca]
default_ca = d
[d]
database = $P/index.txt
new_certs_dir = $P
serial = $P/serial
default_md = sha256
policy = p
copy_extensions = copy
unique_subject = no
[p]
commonName = supplied
[server]
subjectAltName = IP:127.0.0.1,DNS:localhost
extendedKeyUsage = serverAuth
[wrong]
subjectAltName = DNS:wrong.example
extendedKeyUsage = serverAuth
[client]
extendedKeyUsage = clientAuth
CONF
: >"$P/index.txt"
echo 01 >"$P/serial"
ca() { # ca NAME CA-PREFIX: a self-signed CA
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/$1.key" \
		-out "$P/$1.pem" -subj "/CN=$1" -days 30 2>/dev/null
}
leaf() { # leaf NAME CA EXTENSIONS [openssl ca date options]: a key and a certificate signed by CA
	name=$1 signer=$2 ext=$3
	shift 3
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/$name.key" \
		-out "$P/$name.csr" -subj "/CN=$name" 2>/dev/null &&
		openssl ca -batch -config "$P/ca.cnf" -cert "$P/$signer.pem" -keyfile "$P/$signer.key" \
			-in "$P/$name.csr" -out "$P/$name.pem" -extensions "$ext" -notext "$@" >/dev/null 2>&1
}
fp() { openssl x509 -in "$1" -noout -fingerprint -sha256 | sed 's/.*=//'; }
ca ca && ca clientca &&
	leaf a ca server -days 30 && leaf b ca server -days 30 &&
	leaf expired ca server -startdate 20200101000000Z -enddate 20200201000000Z &&
	leaf wrong ca wrong -days 30 && leaf client clientca client -days 30
expect_eq "openssl made the test certificates" "ok" \
	"$([ -s "$P/a.pem" ] && [ -s "$P/expired.pem" ] && [ -s "$P/wrong.pem" ] && [ -s "$P/client.pem" ] && echo ok)"
FP_A=$(fp "$P/a.pem")
FP_B=$(fp "$P/b.pem")
install -m 600 "$P/a.pem" "$WORK/server.pem"
install -m 600 "$P/a.key" "$WORK/server.key"

# --- a daemon with server.tls.cert_file ---------------------------------------------------
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
  header_timeout: 2s
  tls:
    cert_file: $WORK/server.pem
    key_file: $WORK/server.key
tofu:
  binary: $TF
  debounce: 200ms
  workers: 1
observe:
  interval: 1h
  fast_interval: 1h
plugin_dir: $WORK/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=tls-test-password start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts with server.tls.cert_file"
else
	not_ok "the daemon starts with server.tls.cert_file" "$(cat "$WORK/daemon.log")"
fi
URL="https://127.0.0.1:$PORT"
expect_match "the ready line says https" 'msg=ready .* scheme=https' "$(cat "$WORK/daemon.log")"
expect_match "the start logs the certificate's fingerprint" "subsys=tls msg=\"serving TLS\" .*fingerprint=$FP_A" \
	"$(cat "$WORK/daemon.log")"
expect_eq "curl verifies the certificate against the CA" "200 1.1" \
	"$(curl -s -o /dev/null -w '%{http_code} %{http_version}' --cacert "$P/ca.pem" "$URL/healthz")"
expect_eq "curl without the CA refuses the certificate (exit 60)" "60" \
	"$(curl -s -o /dev/null "$URL/healthz"; echo $?)"

# --- the WebUI's cookies over TLS: Secure, HttpOnly, SameSite -------------------------------
# cookie_flags HEADERS NAME: the attributes of the Set-Cookie of NAME, one line
cookie_flags() { tr -d '\r' <"$1" | sed -n "s/^[Ss]et-[Cc]ookie: $2=[^;]*;//p" | head -n 1; }
curl -s --cacert "$P/ca.pem" -D "$WORK/login.h" -o "$WORK/login.html" "$URL/login"
seed=$(tr -d '\r' <"$WORK/login.h" | sed -n 's/^[Ss]et-[Cc]ookie: rezus_login=\([^;]*\);.*/\1/p')
csrf=$(sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' "$WORK/login.html" | head -n 1)
expect_match "over TLS the login seed cookie is Secure, HttpOnly and SameSite=Strict" \
	'HttpOnly; SameSite=Strict; Secure$' "$(cookie_flags "$WORK/login.h" rezus_login)"
curl -s --cacert "$P/ca.pem" -D "$WORK/post.h" -o /dev/null -b "rezus_login=$seed" --data-urlencode "csrf=$csrf" \
	--data-urlencode username=admin --data-urlencode password=tls-test-password "$URL/login"
expect_match "a login through the WebUI's form over TLS is answered with a redirect" '^HTTP/1\.1 303' \
	"$(head -n 1 "$WORK/post.h")"
expect_match "... its session cookie Secure, HttpOnly and SameSite=Lax" \
	'HttpOnly; SameSite=Lax; Secure$' "$(cookie_flags "$WORK/post.h" rezus_session)"
expect_match "... and the seed cookie cleared, Secure as well" \
	'Max-Age=0; HttpOnly; SameSite=Strict; Secure$' "$(cookie_flags "$WORK/post.h" rezus_login)"
sc() { openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$P/ca.pem" "$@" </dev/null 2>&1; }
expect_match "TLS 1.2 handshakes, with an intermediate cipher" \
	'New, TLSv1\.2, Cipher is ECDHE-ECDSA-(AES(128|256)-GCM-SHA(256|384)|CHACHA20-POLY1305).*Verify return code: 0 \(ok\)' \
	"$(sc -tls1_2 | tr '\n' ' ')"
expect_match "TLS 1.3 handshakes" 'New, TLSv1\.3, Cipher is TLS_' "$(sc -tls1_3 | tr '\n' ' ')"
expect_match "ALPN picks http/1.1 from h2,http/1.1" 'ALPN protocol: http/1\.1' "$(sc -alpn h2,http/1.1)"
expect_match "TLS 1.1 is refused by the server (protocol version alert)" 'alert protocol version' \
	"$(sc -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0')"
expect_match "a TLS 1.2 CBC cipher outside the list is refused" 'handshake failure|no cipher|alert' \
	"$(sc -tls1_2 -cipher 'ECDHE-ECDSA-AES128-SHA')"

# --- plain HTTP on the TLS port -----------------------------------------------------------
plain=$(curl -s -i "http://127.0.0.1:$PORT/healthz" | tr -d '\r')
expect_match "plain HTTP gets a clear-text 400" '^HTTP/1\.1 400 Bad Request' "$plain"
expect_match "... saying what went wrong" 'Client sent an HTTP request to an HTTPS server\.' "$plain"
expect_match "... and it is logged" 'plain HTTP request on the TLS port refused' "$(cat "$WORK/daemon.log")"

# A handshake begun and never finished is bounded by server.header_timeout (2 s here), not
# by the 60 s idle timeout: the daemon closes the connection.
stalled=$(/usr/bin/python3 - "$PORT" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"\x16\x03\x01\x00\xc8\x01")  # the start of a ClientHello, then nothing
t0 = time.monotonic()
s.settimeout(20)
try:
    while s.recv(4096):
        pass
    print("closed after %.1f s" % (time.monotonic() - t0))
except socket.timeout:
    print("still open after 20 s")
PY
)
expect_match "a stalled handshake is closed by the header timeout" '^closed after [0-5]\.[0-9] s$' "$stalled"
expect_eq "the daemon still serves TLS after it" "200" \
	"$(curl -s -o /dev/null -w '%{http_code}' --cacert "$P/ca.pem" "$URL/healthz")"

# --- rezusctl, kubectl --------------------------------------------------------------------
echo tls-test-password | "$CTL" login "$URL" --username admin --password-stdin >"$WORK/out" 2>"$WORK/err"
expect_eq "rezusctl login to an https server without its CA fails" "1" "$?"
expect_match "... naming the certificate problem" 'certificate|SSL' "$(cat "$WORK/err")"
echo tls-test-password | "$CTL" login "$URL" --username admin --password-stdin \
	--certificate-authority "$P/ca.pem" >"$WORK/out" 2>"$WORK/err"
expect_eq "rezusctl login with --certificate-authority succeeds" "0" "$?"
expect_match "the context keeps the CA file" "certificate-authority: $P/ca.pem" "$(cat "$HOME/.config/rezus/config")"
TOKEN=$(sed -n 's/^ *token: //p' "$HOME/.config/rezus/config" | head -n 1)
api() { curl -s --cacert "$P/ca.pem" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
"$CTL" create -f - >"$WORK/out" 2>&1 <<YAML
apiVersion: rezuscloud.io/v1
kind: Tenant
metadata:
  name: acme
spec:
  clusterProvider: sim
YAML
expect_eq "rezusctl creates a tenant over https (context from login)" "0" "$?"
expect_match "rezusctl get tenants over https" '^acme ' "$("$CTL" get tenants 2>&1 | tail -n +2)"
"$CTL" --insecure-skip-tls-verify --certificate-authority /dev/null get tenants >"$WORK/out" 2>&1
expect_eq "--insecure-skip-tls-verify skips the check" "0" "$?"
cat >"$WORK/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: rezus
  cluster:
    server: $URL
    certificate-authority: $P/ca.pem
users:
- name: admin
  user:
    token: $TOKEN
contexts:
- name: rezus
  context: {cluster: rezus, user: admin}
current-context: rezus
KC
expect_match "kubectl get --raw /api/v1 with a bearer token over TLS" '"kind":"APIResourceList"' \
	"$("$KUBECTL" --kubeconfig "$WORK/kubeconfig" get --raw /api/v1 2>&1)"
expect_match "... and an authenticated list" '"kind":"TenantList".*"name":"acme"' \
	"$("$KUBECTL" --kubeconfig "$WORK/kubeconfig" get --raw /api/v1/tenants 2>&1)"

# --- a tofu run through the https state backend -------------------------------------------
api -X POST "$URL/api/v1/tenants/acme/nodegroups" \
	-d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}' >/dev/null
phase=""
for _ in $(seq 1 400); do
	phase=$(api "$URL/api/v1/tenants/acme" | sed -n 's/.*"lastRun":{[^}]*"phase":"\([A-Za-z]*\)".*/\1/p')
	case "$phase" in Succeeded | Failed) break ;; esac
	sleep 0.1
done
expect_eq "a sim tenant's run succeeds against the https backend" "Succeeded" "$phase"
[ "$phase" = Succeeded ] || echo "# $(api "$URL/api/v1/tenants/acme/runs" | head -c 1500)"
backend=$(cat "$WORK"/data/work/acme/*.tf.json 2>/dev/null | tr -d '\n ')
expect_match "the generated backend address is https" "\"address\":\"https://127\\.0\\.0\\.1:$PORT/tfstate/acme\"" "$backend"
expect_match "... with the daemon's certificate as the backend CA" '"client_ca_certificate_pem":"-----BEGINCERTIFICATE' "$backend"
expect_match "the state arrived over TLS" '"serial":' "$(api "$URL/api/v1/tenants/acme/state")"

# --- reload on SIGHUP under load ----------------------------------------------------------
# keep-alive: one curl, many requests on one connection; new connections: one curl each.
: >"$WORK/ka.cfg"
for _ in $(seq 1 3000); do printf 'url = "%s"\noutput = "/dev/null"\n' "$URL/healthz" >>"$WORK/ka.cfg"; done
curl -s --rate 1000/s --cacert "$P/ca.pem" -K "$WORK/ka.cfg" -w '%{http_code} %{num_connects}\n' \
	>"$WORK/ka.out" 2>&1 &
KA=$!
# new connections until the reloads are done, 150 at least (a fast machine made 150 of them
# before the last reload), 3000 at most
(n=0
while [ $n -lt 3000 ] && { [ $n -lt 150 ] || [ ! -e "$WORK/reloaded" ]; }; do
	curl -s --cacert "$P/ca.pem" -o /dev/null -w '%{http_code}\n' "$URL/healthz"
	n=$((n + 1))
done) >"$WORK/new.out" 2>&1 &
NEW=$!
sleep 0.3
for leaf in b a b; do
	install -m 600 "$P/$leaf.key" "$WORK/server.key.new" && mv "$WORK/server.key.new" "$WORK/server.key"
	install -m 600 "$P/$leaf.pem" "$WORK/server.pem.new" && mv "$WORK/server.pem.new" "$WORK/server.pem"
	kill -HUP "$DAEMON_PID"
	sleep 0.3
done
# the reloads fell inside the load, or the test proves nothing
expect_eq "both loads were still running after the last reload" "yes" \
	"$(kill -0 "$KA" 2>/dev/null && kill -0 "$NEW" 2>/dev/null && echo yes)"
touch "$WORK/reloaded"
t0=$(date +%s%N)
wait "$KA"
wait "$NEW"
echo "# the loads ended $((($(date +%s%N) - t0) / 1000000)) ms after the last reload"
expect_eq "the keep-alive load got 3000 answers" "3000" "$(wc -l <"$WORK/ka.out" | tr -d ' ')"
expect_eq "... none of them other than 200" "0" "$(grep -vc '^200 ' "$WORK/ka.out")"
expect_eq "... on one connection, kept across the reloads" "1" \
	"$(awk '{ n += $2 } END { print n }' "$WORK/ka.out")"
expect_eq "the new-connection load got 150 answers or more, all 200" "yes 0" \
	"$([ "$(wc -l <"$WORK/new.out")" -ge 150 ] && echo yes) $(grep -vc '^200$' "$WORK/new.out")"
expect_eq "three reloads were logged" "3" "$(grep -c 'msg="certificate reloaded"' "$WORK/daemon.log")"
expect_match "... the last with B's fingerprint" "fingerprint=$FP_B" "$(grep 'certificate reloaded' "$WORK/daemon.log" | tail -n 1)"
expect_eq "a new connection sees certificate B" "$FP_B" \
	"$(sc | openssl x509 -noout -fingerprint -sha256 | sed 's/.*=//')"

echo "not a certificate" >"$WORK/server.pem"
kill -HUP "$DAEMON_PID"
sleep 0.3
expect_match "a bad certificate is refused at reload, with a log line" \
	'level=err subsys=tls msg="reloading the certificate failed: keeping the one in use".*fingerprint='"$FP_B" \
	"$(cat "$WORK/daemon.log")"
expect_eq "... and the old one stays in use" "$FP_B" \
	"$(sc | openssl x509 -noout -fingerprint -sha256 | sed 's/.*=//')"

# --- expired and wrong-host certificates, refused by curl ---------------------------------
serve() { # serve LEAF: put LEAF in place and reload
	install -m 600 "$P/$1.key" "$WORK/server.key" && install -m 600 "$P/$1.pem" "$WORK/server.pem"
	n=$(grep -c 'certificate reloaded' "$WORK/daemon.log")
	kill -HUP "$DAEMON_PID"
	for _ in $(seq 1 50); do
		[ "$(grep -c 'certificate reloaded' "$WORK/daemon.log")" -gt "$n" ] && return 0
		sleep 0.05
	done
	return 1
}
serve expired
curl -s -o /dev/null --cacert "$P/ca.pem" "$URL/healthz" 2>"$WORK/err"
rc=$?
expect_eq "curl refuses an expired certificate (exit 60)" "60" "$rc"
expect_match "... saying it expired" 'expired' "$(curl -sS -o /dev/null --cacert "$P/ca.pem" "$URL/healthz" 2>&1)"
serve wrong
expect_match "curl refuses a certificate for another host" 'no alternative certificate subject name matches|does not match' \
	"$(curl -sS -o /dev/null --cacert "$P/ca.pem" "$URL/healthz" 2>&1)"
serve a
expect_eq "after serving A again, curl is content" "200" \
	"$(curl -s -o /dev/null -w '%{http_code}' --cacert "$P/ca.pem" "$URL/healthz")"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 20
expect_eq "the daemon exits 0 on SIGTERM" "0" "$EXIT_STATUS"

# --- self-signed, with client certificates ------------------------------------------------
cat >"$WORK/self.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/self
  tls:
    self_signed: true
    client_ca_file: $P/clientca.pem
plugin_dir: $WORK/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=tls-test-password start_daemon "$WORK/self.log" -c "$WORK/self.conf"; then
	ok "the daemon starts with server.tls.self_signed and client_ca_file"
else
	not_ok "the daemon starts with server.tls.self_signed" "$(cat "$WORK/self.log")"
fi
SELF="$WORK/self/tls-cert.pem"
expect_eq "the certificate and key are made, mode 0600" "600 600" \
	"$(stat -c %a "$SELF") $(stat -c %a "$WORK/self/tls-key.pem")"
expect_match "the log carries its SHA-256 fingerprint" \
	"msg=\"serving TLS with a new self-signed certificate\" .*fingerprint=$(fp "$SELF") client_certificates=required" \
	"$(cat "$WORK/self.log")"
expect_match "it is ECDSA P-256, naming localhost, 127.0.0.1 and ::1" \
	'(P-256|prime256v1).*DNS:localhost, IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1' \
	"$(openssl x509 -in "$SELF" -noout -text | tr '\n' ' ')"
curl -s -o /dev/null --cacert "$SELF" "https://127.0.0.1:$PORT/healthz"
expect_match "a client without a certificate is refused" '^(35|55|56|58)$' "$?"
expect_eq "a client with a certificate from client_ca_file is served" "200" \
	"$(curl -s -o /dev/null -w '%{http_code}' --cacert "$SELF" --cert "$P/client.pem" --key "$P/client.key" \
		"https://127.0.0.1:$PORT/healthz")"
curl -s -o /dev/null --cacert "$SELF" --cert "$P/a.pem" --key "$P/a.key" "https://127.0.0.1:$PORT/healthz"
expect_match "a certificate from another CA is refused" '^(35|55|56|58)$' "$?"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 20

# --- plain HTTP off loopback --------------------------------------------------------------
sed -e "s|127.0.0.1:0|0.0.0.0:0|" -e '/tls:/,/client_ca_file/d' -e "s|$WORK/self|$WORK/open|" \
	"$WORK/self.conf" >"$WORK/open.conf"
"$REZUSCLOUD" -c "$WORK/open.conf" >"$WORK/open.out" 2>"$WORK/open.log" &
pid=$!
wait_exit "$pid" 20
expect_eq "without TLS, a daemon on 0.0.0.0 refuses to start (configuration error, 2)" "2" "$EXIT_STATUS"
expect_match "... naming the settings that fix it" \
	"server.listen: '0.0.0.0:0' is not a loopback address.*server.tls.cert_file.*server.tls.self_signed.*server.tls.allow_plain_http" \
	"$(cat "$WORK/open.log")"
done_testing
