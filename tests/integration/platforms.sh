#!/bin/sh
# The platform plugins as operators meet them: rezus-plugin-check passes talos, oci,
# openstack and metal; the daemon loads them and publishes their providerConfig schemas;
# every class of providerConfig error comes back through the API as a 422 with one cause
# per bad field under spec.providerConfig; the example manifests are accepted.
. "${top_srcdir:-.}/tests/integration/lib.sh"

CHECK="$top_builddir/rezus-plugin-check"
for p in talos oci openstack metal; do
	"$CHECK" "$top_builddir/plugins/.libs/$p.so" >"$WORK/check-$p.out" 2>&1
	expect_eq "rezus-plugin-check passes the $p plugin" "0" "$?"
done

cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $WORK/no-tofu-here
plugin_dir: $top_builddir/plugins
plugins:
  talos: {}
  oci: {}
  openstack: {}
  metal: {}
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=platforms-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts with the four platform plugins"
else
	not_ok "the daemon starts with the four platform plugins" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"platforms-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
for p in talos oci openstack metal; do
	expect_match "$p is a loaded Provider" '"name":"'"$p"'".*"status":\{"loaded":true\}' "$(api "$API/providers/$p")"
done
expect_match "oci publishes its providerConfig schema" '"providerConfigSchema":\{.*"required":\["compartment","subnet","image"\]' \
	"$(api "$API/providers/oci")"
api -X POST "$API/tenants" -d '{"metadata":{"name":"acme"},"spec":{"clusterProvider":"talos","controlPlaneEndpoint":"https://k8s.acme.example:6443"}}' >/dev/null

# causes BODY: the 422's causes as "field reason" lines, in order.
causes() {
	out=$(api -X POST "$API/tenants/acme/nodegroups" -d "$1")
	case "$out" in *'"code":422'*) ;; *) echo "not a 422: $out"; return ;; esac
	printf '%s\n' "$out" | grep -o '"field":"[^"]*","reason":"[^"]*"' |
		sed 's/"field":"\([^"]*\)","reason":"\([^"]*\)"/\1 \2/' | tr '\n' ';'
}
P=spec.providerConfig
expect_eq "oci: missing fields, each named" \
	"$P.compartment FieldValueRequired;$P.subnet FieldValueRequired;$P.image FieldValueRequired;$P.shape FieldValueRequired;" \
	"$(causes '{"metadata":{"name":"a"},"spec":{"role":"worker","providerClass":"oci"}}')"
expect_eq "oci: unknown field, wrong OCIDs, types, ranges, lists, fixed shape with ocpus" \
	"$P.color FieldValueNotSupported;$P.compartment FieldValueInvalid;$P.subnet FieldValueInvalid;$P.image FieldValueInvalid;$P.ocpus FieldValueForbidden;$P.bootVolumeGb FieldValueInvalid;$P.assignPublicIp FieldValueInvalid;$P.nsgIds[0] FieldValueInvalid;$P.privateIps[1] FieldValueInvalid;" \
	"$(causes '{"metadata":{"name":"a"},"spec":{"role":"worker","count":3,"providerClass":"oci:VM.Standard2.1","providerConfig":{"compartment":"ocid1.vcn.oc1..x","subnet":7,"image":"ami-123","color":"blue","ocpus":2,"bootVolumeGb":10,"assignPublicIp":"yes","nsgIds":["sg-1"],"privateIps":["10.0.0.1","10.0.0.300"]}}}')"
expect_eq "oci: a flexible shape needs ocpus and memory; addresses one per machine; one shape" \
	"$P.shape FieldValueInvalid;$P.ocpus FieldValueRequired;$P.memoryGb FieldValueRequired;$P.privateIps FieldValueInvalid;" \
	"$(causes '{"metadata":{"name":"a"},"spec":{"role":"worker","count":2,"providerClass":"oci:VM.Standard.A1.Flex","providerConfig":{"compartment":"ocid1.compartment.oc1..a","subnet":"ocid1.subnet.oc1.eu-frankfurt-1.a","image":"ocid1.image.oc1.eu-frankfurt-1.a","shape":"VM.Standard.E4.Flex","privateIps":["10.0.0.1"]}}}')"
expect_eq "openstack: missing fields" \
	"$P.image FieldValueRequired;$P.network FieldValueRequired;$P.flavor FieldValueRequired;" \
	"$(causes '{"metadata":{"name":"b"},"spec":{"role":"worker","providerClass":"openstack"}}')"
expect_eq "openstack: bad UUIDs, flavor conflict, addresses without subnet, ranges, CIDRs" \
	"$P.extra FieldValueNotSupported;$P.image FieldValueInvalid;$P.network FieldValueInvalid;$P.flavor FieldValueInvalid;$P.fixedIps FieldValueInvalid;$P.subnet FieldValueRequired;$P.bootVolumeGb FieldValueInvalid;$P.dataVolumeGb FieldValueInvalid;$P.allowedCidrs[0] FieldValueInvalid;" \
	"$(causes '{"metadata":{"name":"b"},"spec":{"role":"worker","count":2,"providerClass":"openstack:SCS-2V-4","providerConfig":{"image":"ubuntu","network":"8c7a2b1e-1f0d-4e9b-a6c5","flavor":"m1.small","fixedIps":["10.0.0.5"],"bootVolumeGb":5,"dataVolumeGb":-1,"allowedCidrs":["10.0.0.0/33"],"extra":true}}}')"
expect_eq "metal: the machine list is required" "$P.machines FieldValueRequired;" \
	"$(causes '{"metadata":{"name":"c"},"spec":{"role":"worker","providerClass":"metal"}}')"
expect_eq "metal: each machine's fields, duplicates, and the count must agree" \
	"$P.machines FieldValueInvalid;$P.machines[0].installDisk FieldValueRequired;$P.machines[1].mac FieldValueNotSupported;$P.machines[1].installDisk FieldValueInvalid;$P.machines[1].hostname FieldValueInvalid;$P.machines[1].schematic FieldValueInvalid;$P.machines[1].interface FieldValueInvalid;$P.machines[1].address FieldValueDuplicate;" \
	"$(causes '{"metadata":{"name":"c"},"spec":{"role":"worker","count":3,"providerClass":"metal","providerConfig":{"machines":[{"address":"10.0.0.1"},{"address":"10.0.0.1","installDisk":"sda","hostname":"Node_1","schematic":"abc","interface":"eth 0","mac":"x"}]}}}')"
expect_match "a cause says what is wrong" \
	'"field":"spec.providerConfig.machines","reason":"FieldValueInvalid","message":"lists 2 machines but spec.count is 3: they must agree"' \
	"$(api -X POST "$API/tenants/acme/nodegroups" -d '{"metadata":{"name":"c"},"spec":{"role":"worker","count":3,"providerClass":"metal","providerConfig":{"machines":[{"address":"10.0.0.1","installDisk":"/dev/sda"},{"address":"10.0.0.2","installDisk":"/dev/sda"}]}}}')"
expect_eq "a cluster plugin owns no node groups" \
	"spec.providerClass FieldValueNotSupported;" \
	"$(causes '{"metadata":{"name":"d"},"spec":{"role":"worker","providerClass":"talos"}}')"

# The examples are what an operator starts from: each platform's manifests are accepted
# (examples/sim's by the sim plugin, loaded beside the four). examples/nats holds no tenant:
# natsperms.sh checks it.
for dir in "$top_srcdir"/examples/*/; do
	[ -f "$dir/1-tenant.yaml" ] || continue
	platform=$(basename "$dir")
	tenant=$(sed -n 's/^  name: \(.*\)/\1/p' "$dir/1-tenant.yaml" | head -n 1)
	codes=""
	for f in "$dir"*.yaml; do # in name order, as kubectl applies a directory: the tenant first
		kind=$(sed -n 's/^kind: //p' "$f" | head -n 1)
		case "$kind" in
		Tenant) url="$API/tenants" ;;
		NodeGroup) url="$API/tenants/$tenant/nodegroups" ;;
		ConfigPatch) url="$API/tenants/$tenant/configpatches" ;;
		*) url="" ;;
		esac
		code=$(curl -s -o "$WORK/example.out" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
			-H 'Content-Type: application/yaml' --data-binary "@$f" "$url")
		[ "$code" = 201 ] || cat "$WORK/example.out" >&2
		codes="$codes $code"
	done
	expect_match "examples/$platform is accepted" '^( 201)+$' "$codes"
done

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 5
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
DAEMON_PID=""
done_testing
