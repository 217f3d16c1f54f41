# tests/integration/k8sfront.sh - what kubectl.sh and pyclient.sh share: a daemon, its admin
# token, and the TLS front Kubernetes clients need (client-go and the Python client send a
# bearer token only over https).
#
# tls_front is a STAND-IN for the daemon's own TLS: a TLS-terminating nginx on loopback,
# with a self-signed certificate made here, in front of the daemon's plain HTTP. Once the
# daemon serves TLS itself (server.tls.self_signed: true), tls_front only has to point
# K8S_URL at the daemon and K8S_CA at its certificate; nothing else changes.
. "${top_srcdir:-.}/tests/integration/lib.sh"

NGINX_PID=""
k8s_cleanup() {
	if [ -n "$NGINX_PID" ] && kill -0 "$NGINX_PID" 2>/dev/null; then
		kill -TERM "$NGINX_PID" 2>/dev/null
	fi
	cleanup
}
trap k8s_cleanup EXIT

# free_port: a port nothing listens on now, on loopback.
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# k8s_daemon PASSWORD: start the daemon with the sim plugin; sets PORT, API, TOKEN.
k8s_daemon() {
	cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: /usr/local/bin/terraform
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
	REZUSCLOUD_ADMIN_PASSWORD=$1 start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf" || return 1
	API="http://127.0.0.1:$PORT/api/v1"
	TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d "{\"username\":\"admin\",\"password\":\"$1\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
	[ -n "$TOKEN" ]
}

# tls_front: the stand-in TLS (see above); sets K8S_URL and K8S_CA.
tls_front() {
	tport=$(free_port)
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/tls.key" -out "$WORK/tls.crt" \
		-days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null || return 1
	mkdir -p "$WORK/nginx"
	cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
master_process off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $WORK/nginx/body;
	proxy_temp_path $WORK/nginx/proxy;
	fastcgi_temp_path $WORK/nginx/fastcgi;
	uwsgi_temp_path $WORK/nginx/uwsgi;
	scgi_temp_path $WORK/nginx/scgi;
	server {
		listen 127.0.0.1:$tport ssl;
		ssl_certificate $WORK/tls.crt;
		ssl_certificate_key $WORK/tls.key;
		location / {
			proxy_pass http://127.0.0.1:$PORT;
			proxy_http_version 1.1;
			proxy_buffering off;
			proxy_read_timeout 300s;
		}
	}
}
CONF
	nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" 2>"$WORK/nginx/start.log" &
	NGINX_PID=$!
	K8S_URL="https://127.0.0.1:$tport"
	K8S_CA="$WORK/tls.crt"
	for _ in $(seq 1 100); do
		curl -s -o /dev/null --cacert "$K8S_CA" "$K8S_URL/healthz" && return 0
		sleep 0.05
	done
	return 1
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
