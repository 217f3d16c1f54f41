#!/bin/sh
# The RezusCloud add-on's entry point: the options Home Assistant writes to
# /data/options.json become rezuscloud's settings, then the daemon runs as user rezus with
# its data in /data.
#
# Home Assistant's ingress proxy (172.30.32.2, on the Supervisor's internal network) talks
# plain HTTP to ingress_port and names the client and the panel's path in X-Forwarded-For
# and X-Ingress-Path: it is the one trusted proxy, and plain HTTP is allowed off loopback
# since the add-on publishes no port (config.yaml has no ports:).
#
# Secrets (config.yaml's password options) never pass through this script's arguments, its
# output or a shell variable: jq writes each into its own file (0600, user rezus) in the
# run directory, and the daemon, tofu and the cloud providers read them from there. The
# plugins' section is the one setting that needs a file (rezus.conf(5): plugins); the rest
# are REZUSCLOUD_* variables. Nothing here is kept: every start writes them again.
set -eu

options=${REZUS_ADDON_OPTIONS:-/data/options.json}
run=${REZUS_ADDON_RUN_DIR:-/run/rezus-addon}

die() {
	echo "rezuscloud add-on: $*" >&2
	exit 2
}

# opt KEY: a non-secret option as text ("" when absent or null).
opt() {
	jq -r --arg k "$1" 'if .[$k] == null then "" else .[$k] | tostring end' "$options"
}

# secret FILE KEY: write a secret option to FILE, and say whether it is set. Only jq sees it.
secret() {
	jq -j --arg k "$2" '.[$k] // ""' "$options" >"$1"
	[ -s "$1" ]
}

# has KEY: whether a secret option is set, without reading it into the shell.
has() {
	[ "$(jq --arg k "$1" '.[$k] // "" | tostring | length' "$options")" -gt 0 ]
}

[ -r "$options" ] || die "cannot read the options file $options"

level=$(opt log_level)
case ${level:=info} in
debug | info | notice | warning | err | crit | alert | emerg) ;;
*) die "log_level \"$level\" is not one of debug, info, notice, warning, err, crit, alert, emerg" ;;
esac

password_file=$(opt admin_password_file)
if [ -n "$password_file" ]; then
	if ! setpriv --reuid=rezus --regid=rezus --init-groups test -r "$password_file"; then
		die "admin_password_file $password_file is not readable by user rezus (uid 10001)"
	fi
	export REZUSCLOUD_AUTH_ADMIN_PASSWORD_FILE="$password_file"
fi

# -------------------------------------------------------------- plugins
plugins=$(jq -r '(.plugins // ["talos"]) | .[]' "$options")
[ -n "$plugins" ] || die "plugins is empty: name at least one of talos, metal, oci, openstack, sim"
for p in $plugins; do
	case $p in
	talos | metal | oci | openstack | sim) ;;
	*) die "plugins: \"$p\" is not one of talos, metal, oci, openstack, sim" ;;
	esac
done
uses() { printf '%s\n' "$plugins" | grep -qx "$1"; }

umask 077
rm -rf "$run"
mkdir -p "$run"
conf="$run/rezus.conf"
{
	echo "# Written by the add-on's run script from /data/options.json at each start."
	echo "plugins:"
	for p in $plugins; do
		if [ "$p" = oci ] && [ -n "$(opt oci_region)" ]; then
			printf '  oci:\n    region: "%s"\n' "$(opt oci_region)"
		else
			printf '  %s: {}\n' "$p"
		fi
	done
} >"$conf"

# OCI: the provider reads OCI_* (plugins/oci); the API key goes into a file of its own.
if uses oci; then
	for k in oci_tenancy_ocid oci_user_ocid oci_fingerprint; do
		[ -n "$(opt $k)" ] || die "the oci plugin needs $k"
	done
	case $(opt oci_tenancy_ocid) in ocid1.tenancy.*) ;; *) die "oci_tenancy_ocid is not a tenancy OCID (ocid1.tenancy...)" ;; esac
	case $(opt oci_user_ocid) in ocid1.user.*) ;; *) die "oci_user_ocid is not a user OCID (ocid1.user...)" ;; esac
	printf '%s\n' "$(opt oci_fingerprint)" | grep -Eqx '([0-9a-f]{2}:){15}[0-9a-f]{2}' ||
		die "oci_fingerprint is not a key fingerprint (16 hex pairs separated by colons)"
	region=$(opt oci_region)
	[ -z "$region" ] || printf '%s\n' "$region" | grep -Eqx '[a-z0-9-]{1,40}' ||
		die "oci_region \"$region\" is not a region name such as eu-frankfurt-1"
	secret "$run/oci.raw" oci_private_key || die "the oci plugin needs oci_private_key"
	# A key pasted into the UI's one-line field loses its line breaks: put them back.
	awk '{ s = s $0 "\n" }
	END {
		if (!match(s, /-----BEGIN [A-Z ]*PRIVATE KEY-----/)) exit 1
		head = substr(s, RSTART, RLENGTH); rest = substr(s, RSTART + RLENGTH)
		if (!match(rest, /-----END [A-Z ]*PRIVATE KEY-----/)) exit 1
		body = substr(rest, 1, RSTART - 1); tail = substr(rest, RSTART, RLENGTH)
		if (body ~ /:/) { printf "%s", s; exit 0 }   # headers (Proc-Type): keep as given
		gsub(/[ \t\r\n]/, "", body)
		print head
		for (i = 1; i <= length(body); i += 64) print substr(body, i, 64)
		print tail
	}' "$run/oci.raw" >"$run/oci_api_key.pem" ||
		die "oci_private_key is not a PEM private key (-----BEGIN ... PRIVATE KEY-----)"
	rm -f "$run/oci.raw"
	OCI_TENANCY_OCID=$(opt oci_tenancy_ocid)
	OCI_USER_OCID=$(opt oci_user_ocid)
	OCI_FINGERPRINT=$(opt oci_fingerprint)
	OCI_PRIVATE_KEY_PATH="$run/oci_api_key.pem"
	export OCI_TENANCY_OCID OCI_USER_OCID OCI_FINGERPRINT OCI_PRIVATE_KEY_PATH
fi

# OpenStack: an application credential in a clouds.yaml (JSON is YAML), named by OS_CLOUD.
if uses openstack; then
	case $(opt openstack_auth_url) in
	https://* | http://*) ;;
	*) die "the openstack plugin needs openstack_auth_url (https://keystone.example.com:5000/v3)" ;;
	esac
	[ -n "$(opt openstack_application_credential_id)" ] ||
		die "the openstack plugin needs openstack_application_credential_id"
	has openstack_application_credential_secret ||
		die "the openstack plugin needs openstack_application_credential_secret"
	jq '{clouds: {rezus: ({auth_type: "v3applicationcredential",
		auth: {auth_url: .openstack_auth_url,
			application_credential_id: .openstack_application_credential_id,
			application_credential_secret: .openstack_application_credential_secret}}
		+ (if (.openstack_region // "") != "" then {region_name: .openstack_region} else {} end))}}' \
		"$options" >"$run/clouds.yaml"
	export OS_CLOUD=rezus OS_CLIENT_CONFIG_FILE="$run/clouds.yaml"
fi

# -------------------------------------------------------------- backups
# Backups of the database on a schedule into /data/backups (Home Assistant's backups take
# /data); with s3 each is also stored, sealed, in the bucket, and so are the tenants' etcd
# snapshots (docs/backups.md).
interval=$(opt backup_interval)
: "${interval:=24h}"
printf '%s\n' "$interval" | grep -Eqx '[1-9][0-9]*(ms|s|m|h|d)' ||
	die "backup_interval \"$interval\" is not a duration such as 24h"
keep=$(opt backup_keep)
case ${keep:=7} in '' | *[!0-9]*) die "backup_keep \"$keep\" is not a number from 1 to 1000" ;; esac
if [ "$keep" -lt 1 ] || [ "$keep" -gt 1000 ]; then
	die "backup_keep \"$keep\" is not a number from 1 to 1000"
fi
export REZUSCLOUD_BACKUP_DIR=/data/backups REZUSCLOUD_BACKUP_INTERVAL="$interval" \
	REZUSCLOUD_BACKUP_KEEP="$keep"
if has backup_passphrase; then
	n=$(jq '.backup_passphrase | length' "$options")
	if [ "$n" -lt 8 ] || [ "$n" -gt 1024 ]; then
		die "backup_passphrase must be 8 to 1024 characters"
	fi
	secret "$run/backup.passphrase" backup_passphrase
	export REZUSCLOUD_BACKUP_PASSPHRASE_FILE="$run/backup.passphrase"
fi

target=$(opt backup_target)
case ${target:=local} in
local) ;;
s3)
	case $(opt s3_endpoint) in
	https://* | http://*) ;;
	*) die "backup_target s3 needs s3_endpoint (https://HOST[:PORT])" ;;
	esac
	[ -n "$(opt s3_bucket)" ] || die "backup_target s3 needs s3_bucket"
	opt s3_access_key_id | grep -Eqx '[A-Za-z0-9._-]{1,128}' ||
		die "backup_target s3 needs s3_access_key_id (letters and digits)"
	has s3_secret_access_key || die "backup_target s3 needs s3_secret_access_key"
	jq -j '"[default]\naws_access_key_id = \(.s3_access_key_id)\naws_secret_access_key = \(.s3_secret_access_key)\n"' \
		"$options" >"$run/s3.credentials"
	REZUSCLOUD_ETCD_BACKUP_S3_ENDPOINT=$(opt s3_endpoint)
	REZUSCLOUD_ETCD_BACKUP_S3_BUCKET=$(opt s3_bucket)
	REZUSCLOUD_ETCD_BACKUP_S3_PATH_STYLE=$(opt s3_path_style)
	export REZUSCLOUD_BACKUP_TARGET=s3 REZUSCLOUD_ETCD_BACKUP_TARGET=s3 \
		REZUSCLOUD_ETCD_BACKUP_S3_CREDENTIALS_FILE="$run/s3.credentials" \
		REZUSCLOUD_ETCD_BACKUP_S3_ENDPOINT REZUSCLOUD_ETCD_BACKUP_S3_BUCKET \
		REZUSCLOUD_ETCD_BACKUP_S3_PATH_STYLE="${REZUSCLOUD_ETCD_BACKUP_S3_PATH_STYLE:-false}"
	# empty: the daemon's defaults (rezus/etcd/, us-east-1)
	prefix=$(opt s3_prefix)
	[ -z "$prefix" ] || export REZUSCLOUD_ETCD_BACKUP_S3_PREFIX="$prefix"
	region=$(opt s3_region)
	[ -z "$region" ] || export REZUSCLOUD_ETCD_BACKUP_S3_REGION="$region"
	;;
*) die "backup_target \"$target\" is not local or s3" ;;
esac

echo "rezuscloud add-on: plugins $(printf '%s\n' "$plugins" | paste -s -d ' '); backups every $interval, $keep kept, target $target"

export REZUSCLOUD_SERVER_TRUSTED_PROXIES=172.30.32.2
export REZUSCLOUD_SERVER_TLS_SELF_SIGNED=false
export REZUSCLOUD_SERVER_TLS_ALLOW_PLAIN_HTTP=true
export REZUSCLOUD_DATA_DIR=/data

chown -R rezus:rezus "$run"
chown rezus:rezus /data
exec setpriv --reuid=rezus --regid=rezus --init-groups --inh-caps=-all --bounding-set=-all \
	/usr/sbin/rezuscloud -c "$conf" --log-level "$level" --listen 0.0.0.0:8080 --data-dir /data
