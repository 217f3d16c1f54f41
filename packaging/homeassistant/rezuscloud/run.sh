#!/bin/sh
# The RezusCloud add-on's entry point: the options Home Assistant writes to
# /data/options.json become rezuscloud's settings, then the daemon runs as user rezus with
# its data in /data.
#
# Home Assistant's ingress proxy (172.30.32.2, on the Supervisor's internal network) talks
# plain HTTP to ingress_port and names the client and the panel's path in X-Forwarded-For
# and X-Ingress-Path: it is the one trusted proxy, and plain HTTP is allowed off loopback
# since the add-on publishes no port (config.yaml has no ports:).
set -eu

options=${REZUS_ADDON_OPTIONS:-/data/options.json}

level=$(jq -r '.log_level // "info"' "$options")
case $level in
debug | info | notice | warning | err | crit | alert | emerg) ;;
*)
	echo "rezuscloud add-on: log_level \"$level\" is not one of debug, info, notice, warning, err, crit, alert, emerg" >&2
	exit 2
	;;
esac

password_file=$(jq -r '.admin_password_file // ""' "$options")
if [ -n "$password_file" ]; then
	if ! setpriv --reuid=rezus --regid=rezus --init-groups test -r "$password_file"; then
		echo "rezuscloud add-on: admin_password_file $password_file is not readable by user rezus (uid 10001)" >&2
		exit 2
	fi
	export REZUSCLOUD_AUTH_ADMIN_PASSWORD_FILE="$password_file"
fi

export REZUSCLOUD_SERVER_TRUSTED_PROXIES=172.30.32.2
export REZUSCLOUD_SERVER_TLS_SELF_SIGNED=false
export REZUSCLOUD_SERVER_TLS_ALLOW_PLAIN_HTTP=true
export REZUSCLOUD_DATA_DIR=/data

chown rezus:rezus /data
exec setpriv --reuid=rezus --regid=rezus --init-groups --inh-caps=-all --bounding-set=-all \
	/usr/sbin/rezuscloud --log-level "$level" --listen 0.0.0.0:8080 --data-dir /data
