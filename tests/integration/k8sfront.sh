# tests/integration/k8sfront.sh - what kubectl.sh and pyclient.sh share: a daemon serving
# TLS with its own self-signed certificate (server.tls.self_signed; client-go and the Python
# client send a bearer token only over https) and its admin token.
. "${top_srcdir:-.}/tests/integration/lib.sh"

# k8s_daemon PASSWORD: start the daemon with the sim plugin and TLS on its self-signed
# certificate; sets PORT, K8S_URL, K8S_CA (the certificate), API and TOKEN.
k8s_daemon() {
	cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
  tls:
    self_signed: true
tofu:
  binary: /usr/local/bin/terraform
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
	REZUSCLOUD_ADMIN_PASSWORD=$1 start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf" || return 1
	K8S_URL="https://127.0.0.1:$PORT"
	K8S_CA="$WORK/data/tls-cert.pem"
	API="$K8S_URL/api/v1"
	TOKEN=$(curl -s --cacert "$K8S_CA" -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d "{\"username\":\"admin\",\"password\":\"$1\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
	[ -n "$TOKEN" ]
}

# kubeconfig FILE: a kubeconfig for K8S_URL with the admin's token.
kubeconfig() {
	cat >"$1" <<CONF
apiVersion: v1
kind: Config
clusters:
- name: rezus
  cluster:
    server: "$K8S_URL"
    certificate-authority: "$K8S_CA"
users:
- name: admin
  user:
    token: "$TOKEN"
contexts:
- name: rezus
  context: {cluster: rezus, user: admin}
current-context: rezus
CONF
}
