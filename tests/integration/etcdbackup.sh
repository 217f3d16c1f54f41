#!/bin/sh
# Tenants' etcd snapshots end to end, with the sim plugin and the real terraform: a snapshot
# asked for (EtcdBackup) is taken through the cluster plugin, encrypted and stored; the
# schedule takes more and retention prunes them with their files; a tenant with no healthy
# control plane is skipped with a Warning Event and a condition; a restore's dry run says
# what it would do, a restore onto a healthy control plane is refused, and one onto a lost
# control plane runs its steps; rezusctl backup tenant, get etcdbackups, and /metrics.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
# an S3-compatible target on loopback: s3rver from npm (tools/install-deps)
NODE_DIR="${NODE_TREE:-$top_srcdir/build/node}/node_modules"
S3PID=
if command -v node >/dev/null 2>&1 && [ -f "$NODE_DIR/s3rver/bin/s3rver.js" ]; then
	S3PORT=$(free_port)
	mkdir "$WORK/bucket"
	node "$NODE_DIR/s3rver/bin/s3rver.js" -d "$WORK/bucket" -a 127.0.0.1 -p "$S3PORT" \
		--configure-bucket snaps --silent >"$WORK/s3rver.log" 2>&1 &
	S3PID=$!
	trap 'kill -TERM "$S3PID" 2>/dev/null; wait "$S3PID" 2>/dev/null; cleanup' EXIT
	for _ in $(seq 1 100); do
		curl -s -o /dev/null "http://127.0.0.1:$S3PORT/" && break
		sleep 0.1
	done
	printf '[default]\naws_access_key_id = S3RVER\naws_secret_access_key = S3RVER\n' >"$WORK/cred"
	chmod 600 "$WORK/cred"
	BACKUPCONF="backup:
  target: s3"
	S3CONF="  s3:
    endpoint: http://127.0.0.1:$S3PORT
    bucket: snaps
    credentials_file: $WORK/cred
    path_style: true"
elif [ -f "${NODE_TREE:-$top_srcdir/build/node}/.installed" ]; then
	not_ok "s3rver is installed in build/node (tools/install-deps)"
fi
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $TF
  debounce: 200ms
observe:
  interval: 300ms
  fast_interval: 150ms
  stable_interval: 300ms
etcd_backup:
  interval: 0
  keep: 2
  timeout: 3s
${S3CONF:-}
plugin_dir: $top_builddir/plugins
plugins:
  sim: {stageMs: 300}
${BACKUPCONF:-}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=etcd-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
	done_testing
	exit 1
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"etcd-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
mpatch() { curl -s -X PATCH -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/merge-patch+json' "$@"; }
js() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
wait_for() {
	n=$(($1 * 10)); shift
	for _ in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
CTL="$top_builddir/rezusctl"
ctl() { "$CTL" --server "http://127.0.0.1:$PORT" --token "$TOKEN" "$@"; }

tenant() { # NAME CP-PROVIDER-CONFIG ETCD-SPEC
	api -X POST "$API/tenants" -d "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"clusterProvider\":\"sim\",\"etcdBackup\":$3}}" >/dev/null
	api -X POST "$API/tenants/$1/nodegroups" -d "{\"metadata\":{\"name\":\"cp\"},\"spec\":{\"role\":\"controlplane\",\"count\":1,\"providerClass\":\"sim\",\"providerConfig\":$2}}" >/dev/null
}
ready() { api "$API/tenants/$1" | grep -q '"phase":"Ready"'; }
phase() { api "$API/tenants/$1/etcdbackups/$2" | js 'd.get("status",{}).get("phase","")'; }
over() { case $(phase "$1" "$2") in Succeeded | Failed | Skipped) return 0 ;; esac; return 1; }
rphase() { api "$API/tenants/$1/etcdrestores/$2" | js 'd.get("status",{}).get("phase","")'; }
rover() { case $(rphase "$1" "$2") in Succeeded | Failed) return 0 ;; esac; return 1; }

# --- a snapshot asked for
tenant demo '{}' '{"interval":"0"}'
wait_for 60 ready demo || not_ok "demo becomes Ready" "$(api "$API/tenants/demo")"
out=$(ctl backup tenant demo)
expect_match "rezusctl backup tenant asks for a snapshot now" '^etcdbackup/etcd-[0-9a-f]{8} created' "$out"
first=$(echo "$out" | sed -n 's|^etcdbackup/\([^ ]*\) created.*|\1|p')
wait_for 30 over demo "$first"
b=$(api "$API/tenants/demo/etcdbackups/$first")
expect_eq "it succeeds, with what was taken and where it went" \
	"Succeeded manual True sha256:64 file:// cp-0 1.12.0 1.35.0 demo/$first.etcd.sealed" \
	"$(echo "$b" | js '" ".join([d["status"]["phase"], d["spec"]["trigger"], str(d["status"]["size"] > 0), d["status"]["checksum"][:7] + str(len(d["status"]["checksum"]) - 7), d["status"]["target"][:7], d["status"]["machine"][-4:], d["status"]["talosVersion"], d["status"]["kubernetesVersion"], d["status"]["key"]])')"
stored="$WORK/data/etcd-backups/demo/$first.etcd.sealed"
expect_eq "the stored file is there, private" "600" "$(stat -c %a "$stored" 2>&1)"
expect_eq "and unreadable without the key: no line of the snapshot in it" "0" \
	"$(grep -c 'rezus-sim-etcd-snapshot' "$stored")"
expect_eq "its Complete condition is True" "True" \
	"$(echo "$b" | js '[c["status"] for c in d["status"]["conditions"] if c["type"]=="Complete"][0]')"
expect_eq "the tenant's EtcdBackup condition says it" "True Succeeded" \
	"$(api "$API/tenants/demo" | js '" ".join([[c["status"], c["reason"]] for c in d["status"]["conditions"] if c["type"]=="EtcdBackup"][0])')"
expect_match "rezusctl get etcdbackups lists it" "^$first +Succeeded +[0-9]+ +1\\.12\\.0 +1\\.35\\.0 " \
	"$(ctl get etcdbackups -t demo 2>&1 | tail -n +2)"
expect_match "a Normal Event says where it went" 'SnapshotStored' \
	"$(api "$API/tenants/demo/events?fieldSelector=involvedObject.name=$first" | js '" ".join(e["reason"] for e in d["items"])')"
expect_match "/metrics has the last success and its size per tenant" \
	'rezuscloud_etcd_backup_last_success_timestamp_seconds\{tenant="demo"\} [0-9]' \
	"$(curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/metrics" | grep '^rezuscloud_etcd_backup')"

# --- the schedule takes more; retention keeps 2, with their files
mpatch "$API/tenants/demo" -d '{"spec":{"etcdBackup":{"interval":"1s"}}}' >/dev/null
succeeded() { [ "$(api "$API/tenants/demo/etcdbackups" | js 'sum(1 for i in d["items"] if i["spec"]["trigger"]=="schedule" and i["status"].get("phase")=="Succeeded")')" -ge 2 ] 2>/dev/null; }
wait_for 60 succeeded
mpatch "$API/tenants/demo" -d '{"spec":{"etcdBackup":{"interval":"0"}}}' >/dev/null
settled() { [ "$(api "$API/tenants/demo/etcdbackups" | js 'len(d["items"])')" = 2 ] && [ "$(ls "$WORK/data/etcd-backups/demo" | wc -l)" = 2 ]; }
wait_for 30 settled
expect_eq "scheduled snapshots come, and the oldest go beyond keep (2), files too" "2 2 schedule" \
	"$(api "$API/tenants/demo/etcdbackups" | js '" ".join([str(len(d["items"])), str(len([i for i in d["items"] if i["status"].get("phase")=="Succeeded"])), sorted(i["spec"]["trigger"] for i in d["items"])[-1]])')"
expect_eq "the first one is gone" "404" \
	"$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$API/tenants/demo/etcdbackups/$first")"

# --- to S3: stored there sealed, read back by a restore's dry run, deleted with its object
if [ -n "$S3PID" ]; then
	mpatch "$API/tenants/demo" -d '{"spec":{"etcdBackup":{"target":"s3"}}}' >/dev/null
	s3=$(api -X POST "$API/tenants/demo/etcdbackups" -d '{"metadata":{}}' | js 'd["metadata"]["name"]')
	wait_for 30 over demo "$s3"
	expect_eq "a snapshot to the s3 target is stored in the bucket" \
		"Succeeded s3://snaps/rezus/etcd/ demo/$s3.etcd.sealed" \
		"$(api "$API/tenants/demo/etcdbackups/$s3" | js 'd["status"]["phase"] + " " + d["status"]["target"] + " " + d["status"]["key"]')"
	expect_eq "where it is an object, and not readable without the key" "1 0" \
		"$(find "$WORK/bucket" -path "*$s3*" -type f -name '*object' | wc -l) $(grep -rl 'rezus-sim-etcd-snapshot' "$WORK/bucket" | wc -l)"
	api -X POST "$API/tenants/demo/etcdrestores" -d "{\"metadata\":{\"name\":\"from-s3\"},\"spec\":{\"backup\":\"$s3\",\"dryRun\":true}}" >/dev/null
	wait_for 30 rover demo from-s3
	expect_eq "a restore's dry run downloads it from the bucket and verifies it" \
		"Succeeded Download=Succeeded Verify=Succeeded" \
		"$(api "$API/tenants/demo/etcdrestores/from-s3" | js 'd["status"]["phase"] + " " + " ".join(s["name"] + "=" + s["phase"] for s in d["status"]["steps"][1:3])')"
	api -X DELETE "$API/tenants/demo/etcdbackups/$s3" >/dev/null
	gone() { [ "$(find "$WORK/bucket" -path "*$s3*" -type f | wc -l)" = 0 ] && [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$API/tenants/demo/etcdbackups/$s3")" = 404 ]; }
	wait_for 30 gone
	expect_eq "deleting the EtcdBackup deletes the object, then the EtcdBackup" "0 404" \
		"$(find "$WORK/bucket" -path "*$s3*" -type f | wc -l) $(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$API/tenants/demo/etcdbackups/$s3")"
	mpatch "$API/tenants/demo" -d '{"spec":{"etcdBackup":{"target":null}}}' >/dev/null
	# the management plane's backups go there too (backup.target)
	bk=$(api -X POST "$API/backups" | js 'd["metadata"]["name"]')
	obj=$(find "$WORK/bucket" -path "*management*$bk*" -type f -name '*object')
	expect_eq "a backup of the management plane is stored there too, sealed" "1 RZSEAL" \
		"$(echo "$obj" | grep -c .) $(head -c 6 "$obj" 2>/dev/null)"
fi

# --- no healthy control plane: skipped, with a Warning and the tenant's condition
api -X POST "$API/tenants" -d '{"metadata":{"name":"bare"},"spec":{"clusterProvider":"sim"}}' >/dev/null
name=$(api -X POST "$API/tenants/bare/etcdbackups" -d '{"metadata":{}}' | js 'd["metadata"]["name"]')
wait_for 30 over bare "$name"
expect_eq "a tenant with no healthy control plane is skipped, saying why" \
	"Skipped no control-plane machine is observed ready: etcd cannot be read" \
	"$(api "$API/tenants/bare/etcdbackups/$name" | js 'd["status"]["phase"] + " " + d["status"]["message"]')"
expect_eq "with a Warning Event" "Warning NoHealthyControlPlane" \
	"$(api "$API/tenants/bare/events?fieldSelector=involvedObject.name=$name" | js '" ".join([e["type"], e["reason"]] for e in d["items"][:1]) if False else " ".join([d["items"][0]["type"], d["items"][0]["reason"]])')"
expect_eq "and the tenant's EtcdBackup condition False" "False NoHealthyControlPlane" \
	"$(api "$API/tenants/bare" | js '" ".join([[c["status"], c["reason"]] for c in d["status"]["conditions"] if c["type"]=="EtcdBackup"][0])')"

# --- restores: a dry run; refused onto a healthy control plane
last=$(api "$API/tenants/demo/etcdbackups" | js 'sorted(d["items"], key=lambda i: i["metadata"]["creationTimestamp"])[-1]["metadata"]["name"]')
api -X POST "$API/tenants/demo/etcdrestores" -d "{\"metadata\":{\"name\":\"dry\"},\"spec\":{\"backup\":\"$last\",\"dryRun\":true}}" >/dev/null
wait_for 30 rover demo dry
r=$(api "$API/tenants/demo/etcdrestores/dry")
expect_eq "a dry run checks, downloads and verifies, then stops" \
	"Succeeded Precheck=Succeeded Download=Succeeded Verify=Succeeded Restore=Skipped WaitHealthy=Skipped" \
	"$(echo "$r" | js 'd["status"]["phase"] + " " + " ".join(s["name"] + "=" + s["phase"] for s in d["status"]["steps"])')"
expect_match "and says what the restore would do" "^dry run: would restore demo/$last.etcd.sealed \\(Talos 1\\.12\\.0, Kubernetes 1\\.35\\.0\\) through cp-0" \
	"$(echo "$r" | js 'd["status"]["message"]')"
api -X POST "$API/tenants/demo/etcdrestores" -d "{\"metadata\":{\"name\":\"live\"},\"spec\":{\"backup\":\"$last\"}}" >/dev/null
wait_for 30 rover demo live
expect_eq "a restore onto a healthy control plane is refused at its precheck" \
	"Failed Precheck=Failed the control plane is healthy" \
	"$(api "$API/tenants/demo/etcdrestores/live" | js 'd["status"]["phase"] + " " + d["status"]["steps"][0]["name"] + "=" + d["status"]["steps"][0]["phase"] + " " + d["status"]["message"][:28]')"
expect_match "with a Warning Event" 'Warning RestoreFailed' \
	"$(api "$API/tenants/demo/events?fieldSelector=involvedObject.name=live" | js '" ".join(e["type"] + " " + e["reason"] for e in d["items"])')"
out=$(api -X POST "$API/tenants/demo/etcdrestores" -d '{"metadata":{"name":"nope"},"spec":{}}' | js 'd["code"], d["details"]["causes"][0]["field"]')
expect_eq "a restore naming no backup is invalid, naming the field" "422 spec.backup" "$out"

# --- a lost control plane: the restore runs its steps; the sim cluster never comes back
tenant lost '{"notReadyOn":0,"notReadyAfter":12000}' '{"interval":"0"}'
wait_for 60 ready lost || not_ok "lost becomes Ready" "$(api "$API/tenants/lost")"
snap=$(api -X POST "$API/tenants/lost/etcdbackups" -d '{"metadata":{}}' | js 'd["metadata"]["name"]')
wait_for 30 over lost "$snap"
expect_eq "a snapshot of it while it is healthy" "Succeeded" "$(phase lost "$snap")"
cp_lost() { api "$API/tenants/lost/machines" | js 'all(not m["status"].get("ready") for m in d["items"])' | grep -q True; }
wait_for 40 cp_lost || not_ok "its control plane is lost" "$(api "$API/tenants/lost/machines")"
api -X POST "$API/tenants/lost/etcdrestores" -d "{\"metadata\":{\"name\":\"back\"},\"spec\":{\"backup\":\"$snap\"}}" >/dev/null
wait_for 40 rover lost back
expect_eq "a restore onto a lost control plane runs its steps (sim: the cluster stays down)" \
	"Failed Precheck=Succeeded Download=Succeeded Verify=Succeeded Restore=Succeeded WaitHealthy=Failed" \
	"$(api "$API/tenants/lost/etcdrestores/back" | js 'd["status"]["phase"] + " " + " ".join(s["name"] + "=" + s["phase"] for s in d["status"]["steps"])')"
expect_eq "nothing is left in the clear" "" "$(ls "$WORK/data/etcd-work")"

# --- the key rotated: new snapshots are sealed with the new key, the old ones still open
out=$("$REZUSCLOUD" etcd-key rotate -c "$WORK/rezus.conf" 2>&1)
expect_match "rezuscloud etcd-key rotate adds a key" "etcd-backup.key: new key [0-9a-f]{32} seals snapshots" "$out"
newid=$(echo "$out" | sed -n 's/.*new key \([0-9a-f]*\) .*/\1/p')
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
if REZUSCLOUD_ADMIN_PASSWORD=etcd-test-pw start_daemon "$WORK/daemon2.log" -c "$WORK/rezus.conf"; then
	API="http://127.0.0.1:$PORT/api/v1"
	TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d '{"username":"admin","password":"etcd-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
fi
wait_for 60 ready demo
fresh=$(api -X POST "$API/tenants/demo/etcdbackups" -d '{"metadata":{}}' | js 'd["metadata"]["name"]')
wait_for 30 over demo "$fresh"
expect_eq "after a restart, a snapshot is sealed with the new key" "Succeeded 1" \
	"$(phase demo "$fresh") $(head -c 64 "$WORK/data/etcd-backups/demo/$fresh.etcd.sealed" | od -An -tx1 -v | tr -d ' \n' | grep -c "$newid")"
api -X POST "$API/tenants/demo/etcdrestores" -d "{\"metadata\":{\"name\":\"old-key\"},\"spec\":{\"backup\":\"$last\",\"dryRun\":true}}" >/dev/null
wait_for 30 rover demo old-key
expect_eq "and one sealed with the old key still opens and verifies" "Succeeded Verify=Succeeded" \
	"$(api "$API/tenants/demo/etcdrestores/old-key" | js 'd["status"]["phase"] + " " + d["status"]["steps"][2]["name"] + "=" + d["status"]["steps"][2]["phase"]')"

done_testing
