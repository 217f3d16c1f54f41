#!/bin/sh
# Runs as people read them, against the real daemon with the sim plugin and a real
# terraform: `rezusctl logs` and the log API in human text by default (tofu's messages,
# diagnostics as tofu prints them), tofu's JSON lines with --raw / ?format=json, a bad
# format refused; following a live run in both forms; no secret of the run (the cluster's
# token, the state passwords) in anything served, to an admin or a viewer; runs newest
# first everywhere in the CLI; TYPE/NAME wherever a NAME goes; one name format for every
# run.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v tofu || command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP neither tofu nor terraform is installed"
	exit 0
fi
CTL="$top_builddir/rezusctl"
export HOME="$WORK/home"
mkdir -p "$HOME" "$WORK/bin"
unset REZUSCLOUD_SERVER REZUSCLOUD_TOKEN KUBECONFIG
# terraform as the daemon runs it, but recording the state password each step is given
# (the test looks for it in the served logs), and slow before a plan while $WORK/slow
# exists, so that followers see the run live.
cat >"$WORK/bin/tf" <<SH
#!/bin/sh
printf '%s\n' "\$TF_HTTP_PASSWORD" >>"$WORK/passwords"
if [ "\$1" = plan ] && [ -e "$WORK/slow" ]; then sleep 2; fi
exec "$TF" "\$@"
SH
chmod +x "$WORK/bin/tf"
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
tofu:
  binary: $WORK/bin/tf
  debounce: 200ms
  workers: 1
observe:
  interval: 1h
  fast_interval: 1h
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
if REZUSCLOUD_ADMIN_PASSWORD=runlog-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts"
else
	not_ok "the daemon starts" "$(cat "$WORK/daemon.log")"
fi
SERVER="http://127.0.0.1:$PORT"
API="$SERVER/api/v1"
echo runlog-test-pw | "$CTL" login "$SERVER" --username admin --password-stdin >/dev/null 2>&1
TOKEN=$(sed -n 's/^ *token: *//p' "$HOME/.config/rezus/config" | head -n 1)
api() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
# run ARGS...: rezusctl with stdout in $WORK/out, stderr in $WORK/err; sets RC.
run() { "$CTL" "$@" >"$WORK/out" 2>"$WORK/err"; RC=$?; }
# finished RUN: until the run has ended; prints its phase.
finished() {
	for _ in $(seq 1 300); do
		p=$(api "$API/tenants/simmy/runs/$1" | sed -n 's/.*"phase":"\([A-Za-z]*\)".*/\1/p')
		case "$p" in Succeeded | Failed | Canceled | Interrupted) break ;; esac
		sleep 0.1
	done
	echo "$p"
}

cat >"$WORK/sim.yaml" <<'YAML'
apiVersion: rezuscloud.io/v1
kind: Tenant
metadata: {name: simmy}
spec: {clusterProvider: sim}
---
apiVersion: rezuscloud.io/v1
kind: NodeGroup
metadata: {name: cp, tenant: simmy}
spec: {role: controlplane, count: 1, providerClass: sim}
YAML
"$CTL" apply -f "$WORK/sim.yaml" >/dev/null
for _ in $(seq 1 300); do
	RUN=$(api "$API/tenants/simmy/runs" | sed -n 's/.*"name":"\(run-[0-9a-z]*\)".*/\1/p' | head -n 1)
	[ -n "$RUN" ] && break
	sleep 0.1
done
expect_eq "the tenant's first run succeeds" "Succeeded" "$(finished "$RUN")"
STORED="$WORK/data/work/simmy/$RUN.log"

# --- readable logs ---------------------------------------------------------------------------
run logs "$RUN" -t simmy
expect_eq "logs prints no JSON UI line" "0 0" "$RC $(grep -c '^{"@level"' "$WORK/out")"
expect_match "but init's text as it is" '^Initializing the backend\.\.\.$' "$(cat "$WORK/out")"
expect_match "each resource's progress, tofu's message" '^terraform_data\.cp\[0\]: Creating\.\.\.$' "$(cat "$WORK/out")"
expect_match "and apply's summary" '^Apply complete! Resources: 2 added, 0 changed, 0 destroyed\.$' "$(cat "$WORK/out")"
cp "$WORK/out" "$WORK/human.txt"
run logs "$RUN" -t simmy --raw
expect_match "logs --raw prints tofu's JSON lines" \
	'^\{"@level":"info","@message":"Apply complete! Resources: 2 added, 0 changed, 0 destroyed\.",.*"type":"change_summary"' "$(cat "$WORK/out")"
expect_eq "one for each line stored, init's plain lines as they are" "$(wc -l <"$STORED")" "$(wc -l <"$WORK/out")"
expect_match "--raw shows in --help" 'logs .*--raw' "$("$CTL" --help)"

expect_eq "the log API answers human text by default" "$(cat "$WORK/human.txt")" "$(api "$API/tenants/simmy/runs/$RUN/log")"
expect_eq "as with ?format=text" "$(cat "$WORK/human.txt")" "$(api "$API/tenants/simmy/runs/$RUN/log?format=text")"
expect_match "?format=json gives the JSON lines" '^\{"@level":"info","@message":"Apply complete!' \
	"$(api "$API/tenants/simmy/runs/$RUN/log?format=json")"
expect_eq "every stored line" "$(wc -l <"$STORED")" "$(api "$API/tenants/simmy/runs/$RUN/log?format=json" | wc -l)"
expect_eq "?format=bogus is 400" "400" "$(api -o "$WORK/bad.json" -w '%{http_code}' "$API/tenants/simmy/runs/$RUN/log?format=bogus")"
expect_match "a Status naming the parameter" '"kind":"Status".*"message":"invalid format .bogus.: use text or json".*"field":"format"' "$(cat "$WORK/bad.json")"

out=$(api -N "$API/tenants/simmy/runs/$RUN/log?follow=true")
expect_match "follow=true on a finished run: the human lines as events" '^data: Apply complete! Resources: 2 added' "$out"
expect_eq "none of them JSON" "0" "$(printf '%s\n' "$out" | grep -c '^data: {')"
expect_eq "then the end event with the phase" "event: end|data: Succeeded|" "$(printf '%s\n' "$out" | tail -n 2 | tr '\n' '|')"
out=$(api -N "$API/tenants/simmy/runs/$RUN/log?follow=true&format=json")
expect_match "with format=json: the JSON lines as events" '^data: \{"@level":"info","@message":"Apply complete!' "$out"
expect_eq "and the end event" "event: end|data: Succeeded|" "$(printf '%s\n' "$out" | tail -n 2 | tr '\n' '|')"
expect_eq "a bad format with follow is 400 too" "400" "$(api -o /dev/null -w '%{http_code}' "$API/tenants/simmy/runs/$RUN/log?follow=true&format=yaml")"

run describe run "$RUN" -t simmy
expect_match "describe run ends its log in human text" 'Log \(last lines.*  Apply complete! Resources: 2 added' "$(tr '\n' ' ' <"$WORK/out")"
expect_eq "with no JSON UI line" "0" "$(grep -c '^  {"@level"' "$WORK/out")"

# following a live run, in both forms, from the CLI and the API
touch "$WORK/slow"
run plan simmy
LIVE=$(sed -n 's|^run/\(run-[0-9a-z]*\) created.*|\1|p' "$WORK/out")
for _ in $(seq 1 100); do
	api "$API/tenants/simmy/runs/$LIVE" | grep -q '"phase":"Running"' && break
	sleep 0.1
done
"$CTL" logs "$LIVE" -t simmy -f >"$WORK/f-text" 2>"$WORK/f-text.err" &
F1=$!
"$CTL" logs "$LIVE" -t simmy -f --raw >"$WORK/f-raw" 2>"$WORK/f-raw.err" &
F2=$!
api -N "$API/tenants/simmy/runs/$LIVE/log?follow=true" >"$WORK/f-api-text" &
F3=$!
api -N "$API/tenants/simmy/runs/$LIVE/log?follow=true&format=json" >"$WORK/f-api-json" &
F4=$!
expect_match "the followers join while the run is going" '"phase":"Running"' "$(api "$API/tenants/simmy/runs/$LIVE")"
rm -f "$WORK/slow"
wait "$F1" "$F2" "$F3" "$F4"
expect_match "logs -f follows it live in human text" '^Plan: 0 to add, 0 to change, 0 to destroy\.$' "$(cat "$WORK/f-text")"
expect_eq "without JSON, ending with the phase" "0 run $LIVE: Succeeded" "$(grep -c '^{' "$WORK/f-text") $(cat "$WORK/f-text.err")"
expect_match "logs -f --raw follows tofu's JSON lines" '^\{"@level":"info","@message":"Plan: 0 to add.*"type":"change_summary"' "$(cat "$WORK/f-raw")"
expect_match "the API's live stream: human events" '^data: Plan: 0 to add' "$(cat "$WORK/f-api-text")"
expect_eq "none JSON, then the end" "0 event: end|data: Succeeded|" \
	"$(grep -c '^data: {' "$WORK/f-api-text") $(grep -v '^$' "$WORK/f-api-text" | tail -n 2 | tr '\n' '|')"
expect_match "with format=json: JSON events" '^data: \{"@level":"info","@message":"Plan: 0 to add' "$(cat "$WORK/f-api-json")"

# a diagnostic reads as tofu prints it: severity and summary, where, the detail
"$CTL" apply -f - >/dev/null <<'YAML'
apiVersion: rezuscloud.io/v1
kind: NodeGroup
metadata: {name: flaky, tenant: simmy}
spec: {role: worker, count: 1, providerClass: sim, providerConfig: {failOn: 0}}
YAML
for _ in $(seq 1 300); do
	FAILED=$(api "$API/tenants/simmy/runs" | grep -o '"name":"run-[0-9a-z]*","tenant":"simmy"[^}]*},"spec":{"operation":"apply","trigger":"update"' |
		sed -n 's/"name":"\([^"]*\)".*/\1/p' | head -n 1)
	[ -n "$FAILED" ] && break
	sleep 0.1
done
expect_eq "a failOn machine fails its run" "Failed" "$(finished "$FAILED")"
run logs "$FAILED" -t simmy
expect_match "its diagnostic reads as tofu prints it" \
	'Error: Resource precondition failed  +on sim\.tf\.json line [0-9]+, in resource\.terraform_data\.flaky\.lifecycle\.precondition\[0\]: +[0-9]+: +"condition": .* count\.index is 0 +sim: machine flaky-0 fails, as providerConfig\.failOn asks' \
	"$(tr '\n' ' ' <"$WORK/out")"
"$CTL" delete ng flaky -t simmy >/dev/null

# --- no secret of the run in what is served ------------------------------------------------------
KTOKEN=$("$CTL" kubeconfig simmy | sed -n 's/^ *token: *//p')
expect_match "the kubeconfig carries the cluster's secret" '^[0-9a-f-]{36}$' "$KTOKEN"
expect_eq "the stored log keeps tofu's lines, but not the secret: ids are redacted on disk too" "0" \
	"$(grep -c -F "$KTOKEN" "$STORED")"
expect_match "the line that showed it is there, redacted" 'cluster_secrets: Creation complete after [0-9]+s \[id=\(redacted\)\]' \
	"$(cat "$STORED")"
grep -v '^$' "$WORK/passwords" | sort -u >"$WORK/secrets"
echo "$KTOKEN" >>"$WORK/secrets"
expect_eq "the runs' state passwords were recorded" "1" "$([ "$(wc -l <"$WORK/secrets")" -ge 3 ] && echo 1)"
"$CTL" user create viewer --role view --password-stdin >/dev/null 2>&1 <<'PW'
viewer-password-1
PW
echo viewer-password-1 | "$CTL" login "$SERVER" --username viewer --password-stdin --context viewer >/dev/null 2>&1
"$CTL" config use-context default >/dev/null
VTOKEN=$(sed -n 's/^ *token: *//p' "$HOME/.config/rezus/config" | grep -v -F "$TOKEN" | head -n 1)
: >"$WORK/served"
for who in "$TOKEN" "$VTOKEN"; do
	for r in "$RUN" "$LIVE" "$FAILED"; do
		for q in "" "?format=json" "?follow=true" "?follow=true&format=json"; do
			curl -s -N -H "Authorization: Bearer $who" "$API/tenants/simmy/runs/$r/log$q" >>"$WORK/served"
		done
	done
done
for ctx in default viewer; do
	"$CTL" logs "$RUN" -t simmy --context "$ctx" >>"$WORK/served" 2>&1
	"$CTL" logs "$RUN" -t simmy --raw --context "$ctx" >>"$WORK/served" 2>&1
	"$CTL" describe run "$RUN" -t simmy --context "$ctx" >>"$WORK/served" 2>&1
done
expect_match "a viewer reads logs" '^Apply complete! Resources: 2 added' \
	"$(curl -s -H "Authorization: Bearer $VTOKEN" "$API/tenants/simmy/runs/$RUN/log")"
expect_eq "no secret of a run in any served log, for admin or viewer, in any form" "0" \
	"$(grep -c -F -f "$WORK/secrets" "$WORK/served")"
expect_match "a resource id reads as redacted" 'terraform_data\.cluster_secrets: Creation complete after [0-9]+s \[id=\(redacted\)\]' "$(cat "$WORK/served")"
expect_match "in the JSON lines too" '"id_key":"id","id_value":"\(redacted\)"' "$(cat "$WORK/served")"

# --- runs newest first, everywhere in the CLI ----------------------------------------------------
: >"$WORK/made"
for _ in $(seq 1 10); do
	P=$("$CTL" plan simmy | sed -n 's|^run/\(run-[0-9a-z]*\) created.*|\1|p')
	echo "run/$P" >>"$WORK/made"
	finished "$P" >/dev/null
done
NEWEST=$(tac "$WORK/made" | tr '\n' ' ')
expect_eq "runs -o name lists ten runs newest first" "$NEWEST" "$("$CTL" runs simmy -o name | head -n 10 | tr '\n' ' ')"
expect_eq "so does get runs -o name" "$NEWEST" "$("$CTL" get runs -t simmy -o name | head -n 10 | tr '\n' ' ')"
expect_eq "and the runs table" "$(echo "$NEWEST" | sed 's|run/||g')" "$("$CTL" runs simmy | awk 'NR > 1 && NR <= 11 {printf "%s ", $1}')"
expect_eq "describe tenant's recent runs are the newest five, newest first" \
	"$(tail -n 5 "$WORK/made" | tac | sed 's|run/||' | tr '\n' ' ')" \
	"$("$CTL" describe tenant simmy | sed -n '/^Recent runs:/,/^$/p' | awk '$1 ~ /^run-/ {printf "%s ", $1}')"

# --- TYPE/NAME wherever a NAME goes ---------------------------------------------------------------
NAMED=$("$CTL" runs simmy -o name | head -n 1)
run logs "$NAMED" -t simmy
expect_eq "logs takes what -o name prints (run/NAME)" "0" "$RC"
expect_match "and prints that run's log" '^Plan: 0 to add' "$(cat "$WORK/out")"
run logs "runs/$RUN"
expect_match "any name of the kind works (runs/NAME), the tenant found by itself" '^Apply complete!' "$(cat "$WORK/out")"
run logs "tenant/$RUN" -t simmy
expect_eq "another kind is a usage error saying so" "2 rezusctl: logs: \"tenant/$RUN\" names a tenant; logs takes a run" "$RC $(head -n 1 "$WORK/err")"
run logs "bogus/$RUN" -t simmy
expect_eq "so is an unknown type" "2 rezusctl: logs: \"bogus/$RUN\": unknown type \"bogus\"" "$RC $(head -n 1 "$WORK/err")"
run describe "run/$RUN" -t simmy
expect_match "describe run/NAME" '^Name: +'"$RUN"'$' "$(cat "$WORK/out")"
run get "run/$RUN" -t simmy -o name
expect_eq "get run/NAME" "run/$RUN" "$(cat "$WORK/out")"
run get runs "$NAMED" "run/$RUN" -t simmy -o name
expect_eq "get TYPE takes NAMEs as TYPE/NAME too" "$NAMED|run/$RUN|" "$(tr '\n' '|' <"$WORK/out")"
run describe run "run/$RUN" -t simmy
expect_match "so does describe TYPE NAME" '^Name: +'"$RUN"'$' "$(cat "$WORK/out")"
run get runs "ng/$RUN" -t simmy
expect_eq "naming another kind there is a usage error" "2 rezusctl: get: \"ng/$RUN\" names a nodegroup; get takes a run" "$RC $(head -n 1 "$WORK/err")"
run approve "run/$RUN" -t simmy
expect_match "approve run/NAME reaches the server about that run" "^1 error: run \"$RUN\" is Succeeded" "$RC $(cat "$WORK/err")"
run cancel "run/$RUN"
expect_match "cancel run/NAME too" "^1 error: run \"$RUN\" is Succeeded" "$RC $(cat "$WORK/err")"
run approve "ng/$RUN" -t simmy
expect_eq "approve of another kind is refused" "2" "$RC"
run runs tenant/simmy -o name
# a resync may have started a newer run since: the run named before is in the list
expect_eq "runs tenant/NAME lists that tenant's runs" "0 $NAMED" \
	"$RC $(grep -x "$NAMED" "$WORK/out")"
run plan tn/simmy
expect_match "plan tn/NAME" '^run/run-[0-9a-z]+ created' "$(cat "$WORK/out")"
finished "$(sed -n 's|^run/\(run-[0-9a-z]*\) created.*|\1|p' "$WORK/out")" >/dev/null
run kubeconfig tenants/simmy
expect_match "kubeconfig tenants/NAME" '^kind: Config' "$(cat "$WORK/out")"
run talosconfig tenant/simmy
expect_match "talosconfig tenant/NAME" '^context: simmy' "$(cat "$WORK/out")"
run kubeconfig run/simmy
expect_eq "kubeconfig of a run is refused" "2" "$RC"
run upgrade tenant/simmy --kubernetes 1.35.1 --dry-run
expect_match "upgrade tenant/NAME --dry-run prints the prechecks and the plan" \
	'^dry run: .*PRECHECK +PASSED +MESSAGE.*Supported +yes .*NoDowngrade .*STEP +MACHINE +ROLE' \
	"$(tr '\n' ' ' <"$WORK/out")"
run user delete user/nobody
expect_eq "user delete user/NAME reaches the server" "1 error: users \"nobody\" not found" "$RC $(cat "$WORK/err")"

# --- one name format for every run ---------------------------------------------------------------
MANUAL=$(api -X POST "$API/tenants/simmy/runs" -d '{"spec":{"operation":"plan"}}' | sed -n 's/.*"name":"\(run-[0-9a-z]*\)".*/\1/p')
expect_match "the engine names its runs run-<8 hex digits>" '^run-[0-9a-f]{8}$' "$RUN"
expect_match "a Run created through the API is named the same way" '^run-[0-9a-f]{8}$' "$MANUAL"
finished "$MANUAL" >/dev/null

kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 5
expect_eq "the daemon stops cleanly" "0" "$EXIT_STATUS"
DAEMON_PID=""
done_testing
