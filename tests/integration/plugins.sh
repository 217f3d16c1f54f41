#!/bin/sh
# Plugins as vendors and operators meet them: rezus-plugin-check on the sim plugin and on
# fixtures it must fail, the sim composition against its golden files, a real
# terraform/tofu apply of it, projection of the resulting state into Machines, a
# kubeconfig that kubectl loads, and the daemon's Providers and NodeGroup validation.
. "${top_srcdir:-.}/tests/integration/lib.sh"

CHECK="$top_builddir/rezus-plugin-check"
SIM="$top_builddir/plugins/.libs/sim.so"
FIX="$top_builddir/tests/fixtures/plugins/.libs"

# --- the conformance checker ---------------------------------------------------------------
"$CHECK" --render-dir "$WORK/tf" "$SIM" >"$WORK/check.out" 2>&1
expect_eq "rezus-plugin-check passes the sim plugin" "0" "$?"
expect_match "it prints the descriptor" '^plugin: +sim 1\.0\.0 \(ABI 1\.3\)$' "$(cat "$WORK/check.out")"
expect_eq "with no warning: sim's rule says when" "" "$(grep '^WARN' "$WORK/check.out")"
"$CHECK" "$FIX/loose.so" >"$WORK/loose.out" 2>&1
expect_eq "a rule with no when on terraform_data is a warning, not a failure" "0" "$?"
expect_match "it names the rule and the remedy" \
	'^WARN projection rule could match other plugins'"'"' resources: rule 0 \(terraform_data\): no "when" on a built-in type: .*select with "when"' \
	"$(cat "$WORK/loose.out")"
expect_match "and counts it" '^OK: 0 checks failed, 1 warning$' "$(cat "$WORK/loose.out")"
"$CHECK" "$FIX/badtf.so" >"$WORK/badtf.out" 2>&1
expect_eq "it fails a plugin that breaks the TF JSON contract" "1" "$?"
for what in 'depends_on\[0\]: must be a bare reference string' \
	'reference to undeclared resource terraform_data.ghost' \
	'a user string reaches a template unescaped'; do
	expect_match "it reports: $what" "$what" "$(cat "$WORK/badtf.out")"
done
expect_match "it checks the sim plugin's observation" \
	'PASS observe_probes keeps the contract: [0-9]+ probes.*PASS observe_parse takes failed, timed-out and garbage output' \
	"$(tr '\n' ' ' <"$WORK/check.out")"
"$CHECK" "$top_builddir/plugins/.libs/talos.so" >"$WORK/talos.out" 2>&1
expect_eq "rezus-plugin-check passes the talos plugin, observation included" "0" "$?"
expect_match "its probes too" 'PASS observe_probes keeps the contract: [0-9]+ probes' "$(cat "$WORK/talos.out")"
expect_match "and its upgrade commands (ABI 1.2)" \
	'PASS upgrade_commands keeps the contract: 3 commands for talos upgrade, rollback and kubernetes upgrade' \
	"$(cat "$WORK/talos.out")"
"$CHECK" "$FIX/badupgrade.so" >"$WORK/badupgrade.out" 2>&1
expect_eq "it fails a plugin whose upgrade commands break the contract" "1" "$?"
expect_match "and names the command and the member" \
	"FAIL upgrade_commands keeps the contract: talos upgrade: plugin 'badupgrade': upgrade_commands broke the contract: command 0 \\('upgrade'\\): tool must be" \
	"$(cat "$WORK/badupgrade.out")"
expect_match "and its etcd snapshot commands (ABI 1.3)" \
	'PASS etcd_commands keeps the contract: snapshot 1 command, restore 1 command' \
	"$(cat "$WORK/talos.out")"
expect_match "it says the talos plugin takes etcd snapshots" \
	'^etcd: +snapshots and restores \(ABI 1\.3\)$' "$(cat "$WORK/talos.out")"
expect_match "sim simulates its snapshots: the text the host writes" \
	'PASS etcd_commands keeps the contract: snapshot 1 command \(simulated: [0-9]+ bytes written\), restore 1 command' \
	"$(cat "$WORK/check.out")"
"$CHECK" "$FIX/etcdecho.so" >"$WORK/etcdecho.out" 2>&1
expect_eq "it fails a plugin whose snapshot writes no file" "1" "$?"
expect_match "and says what a snapshot needs" \
	"FAIL etcd_commands keeps the contract: snapshot: plugin 'etcdecho': etcd_commands broke the contract: a snapshot needs a command that writes the file" \
	"$(cat "$WORK/etcdecho.out")"
"$CHECK" "$FIX/etcdinfra.so" >"$WORK/etcdinfra.out" 2>&1
expect_eq "it fails an infra plugin with etcd_commands" "1" "$?"
expect_match "as the loader refuses it" \
	'FAIL load: etcd_commands is for cluster plugins, and kinds has no cluster' \
	"$(cat "$WORK/etcdinfra.out")"
"$CHECK" "$FIX/abi12.so" >"$WORK/abi12.out" 2>&1
expect_eq "it passes a cluster plugin built against ABI 1.2" "0" "$?"
expect_match "and says it takes no etcd snapshots" \
	'^plugin: +abi12 0\.0\.1 \(ABI 1\.2\).*etcd: +no snapshots \(no etcd_commands\)' \
	"$(tr '\n' ' ' <"$WORK/abi12.out")"
"$CHECK" "$FIX/badobserve.so" >"$WORK/badobserve.out" 2>&1
expect_eq "it fails a plugin whose probes break the observation contract" "1" "$?"
expect_match "and names the probe and the member" \
	"FAIL observe_probes keeps the contract: plugin 'badobserve': observe_probes broke the contract: probe 0 \\('x'\\): tool must be" \
	"$(cat "$WORK/badobserve.out")"
"$CHECK" "$FIX/major.so" >"$WORK/major.out" 2>&1
expect_eq "it fails a plugin built for another ABI" "1" "$?"
expect_match "and says why" 'FAIL load: built for ABI 2\.0, host provides 1\.3' "$(cat "$WORK/major.out")"

# --- composition: golden files ----------------------------------------------------------------
for f in versions.tf.json variables.tf.json terraform.tfvars.json sim.tf.json; do
	if diff -u "$top_srcdir/tests/fixtures/compose/sim/$f" "$WORK/tf/$f" >"$WORK/diff.out"; then
		ok "composition matches the golden $f"
	else
		not_ok "composition matches the golden $f" "$(head -n 20 "$WORK/diff.out")"
	fi
done
expect_eq "terraform.tfvars.json is 0600" "600" "$(stat -c %a "$WORK/tf/terraform.tfvars.json")"

# --- a real apply -------------------------------------------------------------------------------
TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "# neither tofu nor terraform is installed: the apply checks are skipped"
else
	export TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1 TF_INPUT=0 TF_CLI_CONFIG_FILE=/dev/null
	check "$(basename "$TF") init on the composition" "$TF" -chdir="$WORK/tf" init -input=false -no-color
	check "$(basename "$TF") apply on the composition" "$TF" -chdir="$WORK/tf" apply -auto-approve -input=false -no-color
	"$CHECK" --project "$WORK/tf/terraform.tfstate" "$SIM" >"$WORK/project.out" 2>&1
	projected=$(tr -d ' \n' <"$WORK/project.out")
	expect_match "projection gives the control plane machine" '"name":"cp-0","nodeGroup":"cp","spec":\{"address":"10\.99\.24\.10","hostname":"check-cp-0"' "$projected"
	expect_match "and both workers, on their own addresses" '"name":"workers-1","nodeGroup":"workers","spec":\{"address":"10\.99\.176\.11"' "$projected"
	expect_eq "exactly three machines" "3" "$(grep -c '"kind": "Machine"' "$WORK/project.out")"
	"$TF" -chdir="$WORK/tf" output -raw kubeconfig >"$WORK/kubeconfig" 2>/dev/null
	if command -v kubectl >/dev/null; then
		check "the kubeconfig loads in kubectl" kubectl config view --kubeconfig "$WORK/kubeconfig"
		expect_eq "its current context is the tenant's" "admin@check" \
			"$(kubectl config current-context --kubeconfig "$WORK/kubeconfig")"
	fi
fi

# --- the daemon: Providers and NodeGroup validation -------------------------------------------
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
  ghost: { required: false }
CONF
if REZUSCLOUD_ADMIN_PASSWORD=plugins-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts with sim and a missing optional plugin"
else
	not_ok "the daemon starts with sim and a missing optional plugin" "$(cat "$WORK/daemon.log")"
fi
API="http://127.0.0.1:$PORT/api/v1"
TOKEN=$(curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d '{"username":"admin","password":"plugins-test-pw"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
AUTH="Authorization: Bearer $TOKEN"
expect_match "sim shows as a loaded Provider" '"name":"sim".*"status":\{"loaded":true\}' \
	"$(curl -s -H "$AUTH" "$API/providers/sim")"
expect_match "the refused plugin shows why" '"loaded":false,"error":"cannot load: ' \
	"$(curl -s -H "$AUTH" "$API/providers/ghost")"
expect_match "the refusal is one log line naming plugin, file and reason" \
	'msg="plugin refused" plugin=ghost file=.*/ghost.so reason="cannot load: ' "$(cat "$WORK/daemon.log")"
curl -s -o /dev/null -X POST "$API/tenants" -H "$AUTH" -H 'Content-Type: application/json' \
	-d '{"metadata":{"name":"acme"},"spec":{"clusterProvider":"sim"}}'
out=$(curl -s -X POST "$API/tenants/acme/nodegroups" -H "$AUTH" -H 'Content-Type: application/json' \
	-d '{"metadata":{"name":"w"},"spec":{"role":"worker","providerClass":"sim","providerConfig":{"failOn":"x"}}}')
expect_match "the plugin's causes come back as a 422 under spec.providerConfig" \
	'"code":422.*"field":"spec.providerConfig.failOn"' "$out"
out=$(curl -s -X POST "$API/tenants/acme/nodegroups" -H "$AUTH" -H 'Content-Type: application/json' \
	-d '{"metadata":{"name":"w"},"spec":{"role":"worker","providerClass":"oci:VM.Standard.A1.Flex"}}')
expect_match "an unknown plugin is a 422 on spec.providerClass" \
	"\"field\":\"spec.providerClass\",\"reason\":\"FieldValueNotSupported\",\"message\":\"no loaded infra plugin 'oci' \\(loaded: sim\\)\"" "$out"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 2
expect_eq "the daemon stops cleanly (fini)" "0" "$EXIT_STATUS"
DAEMON_PID=""

# --- a required plugin that fails stops start-up ---------------------------------------------
printf 'server:\n  listen: 127.0.0.1:0\n  data_dir: %s/data2\nplugin_dir: %s\nplugins:\n  major: {}\n' \
	"$WORK" "$FIX/.." >"$WORK/required.conf"
"$REZUSCLOUD" -c "$WORK/required.conf" 2>"$WORK/required.log"
expect_eq "a required plugin that is refused stops start-up with exit 2" "2" "$?"
"$REZUSCLOUD" -c "$WORK/required.conf" --check-config 2>/dev/null
expect_eq "and --check-config says so too" "2" "$?"

done_testing
