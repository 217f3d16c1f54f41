#!/bin/sh
# Access per tenant as a table (docs/security.md, "Access per tenant", issue 32): principals
# × routes × tenants, each cell's HTTP status compared with what the documented rules say,
# then the same principals through kubectl (get -A, auth can-i, get -w) and the Python
# client. The tenants t-a1 and t-a2 are labelled team=a, t-b1 team=b. The principals:
#   alice       role none; AccessBinding edit on team=a (a label selector, to her by name)
#   alice-view  alice's API token capped at view
#   bob         role none; AccessBinding view on t-b1 (by the tenant's name)
#   carol       role none, in the group oidc-platform (spec.groups, as an OIDC login sets
#               it); AccessBinding admin on team=a to that group
#   dave        role view on the installation
#   root        role admin on the installation
#   root-edit   root's API token capped at edit
# A cell allowed is any status but 401 and 403 (a missing run's approval is 404, a node
# group's bad body 422: the guard let them through); a cell refused is 403. The API does not
# hide a tenant one may not see behind a 404: it answers 403, as for one that exists.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v terraform || command -v tofu || true)
[ -n "$TF" ] || { not_ok "terraform is installed (tools/install-deps)"; done_testing; exit 1; }
export HOME="$WORK/home"
mkdir -p "$HOME"
unset KUBECONFIG
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
  tls:
    self_signed: true
tofu:
  binary: $TF
  debounce: 200ms
  resync: 0s
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF
REZUSCLOUD_ADMIN_PASSWORD=table-admin-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf" ||
	{ not_ok "the daemon starts" "$(tail -n 5 "$WORK/daemon.log")"; done_testing; exit 1; }
BASE="https://127.0.0.1:$PORT"
API="$BASE/api/v1"
CA="$WORK/data/tls-cert.pem"
export CURL_CA_BUNDLE="$CA"
TENANTS="t-a1 t-a2 t-b1"
PRINCIPALS="alice alice-view bob carol dave root root-edit"

login() { # USER PASSWORD: a session token
	curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d "{\"username\":\"$1\",\"password\":\"$2\"}" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
}
as() { # TOKEN curl-args...
	t=$1
	shift
	curl -s -H "Authorization: Bearer $t" -H 'Content-Type: application/json' "$@"
}
js() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>/dev/null; }
ADMIN=$(login admin table-admin-pw)

# --- the installation: three tenants with a node group each, five users, three bindings
for t in t-a1:a t-a2:a t-b1:b; do
	name=${t%%:*} team=${t#*:}
	as "$ADMIN" -o /dev/null -X POST "$API/tenants" -d "{\"metadata\":{\"name\":\"$name\",\"labels\":{\"team\":\"$team\"}},\"spec\":{\"clusterProvider\":\"sim\"}}"
	as "$ADMIN" -o /dev/null -X POST "$API/tenants/$name/nodegroups" -d '{"metadata":{"name":"cp"},"spec":{"role":"controlplane","count":1,"providerClass":"sim"}}'
done
made=""
for u in alice:none:'[]' bob:none:'[]' carol:none:'["oidc-platform"]' dave:view:'[]' root:admin:'[]'; do
	name=${u%%:*} rest=${u#*:} role=${rest%%:*} groups=${rest#*:}
	made="$made $(as "$ADMIN" -o /dev/null -w '%{http_code}' -X POST "$API/users" -d "{\"metadata\":{\"name\":\"$name\"},\"spec\":{\"role\":\"$role\",\"password\":\"$name-table-pw-1\",\"groups\":$groups}}")"
done
expect_eq "the users alice, bob, carol (none), dave (view) and root (admin) are made" " 201 201 201 201 201" "$made"
made=""
for b in \
	'{"metadata":{"name":"alice-team-a"},"spec":{"role":"edit","subjects":[{"kind":"User","name":"alice"}],"tenants":{"selector":{"team":"a"}}}}' \
	'{"metadata":{"name":"bob-b1"},"spec":{"role":"view","subjects":[{"kind":"User","name":"bob"}],"tenants":{"names":["t-b1"]}}}' \
	'{"metadata":{"name":"platform-team-a"},"spec":{"role":"admin","subjects":[{"kind":"Group","name":"oidc-platform"}],"tenants":{"selector":{"team":"a"}}}}'; do
	made="$made $(as "$ADMIN" -o /dev/null -w '%{http_code}' -X POST "$API/accessbindings" -d "$b")"
done
expect_eq "the bindings: alice edit on team=a, bob view on t-b1, group oidc-platform admin on team=a" " 201 201 201" "$made"

# Each principal's bearer credential, and the one tofu sends as the HTTP basic password on
# /tfstate (an API token: a session is no basic password): a user's own default token, which
# reaches as far as its session; a capped token is both.
for u in alice bob carol dave root; do
	eval "BEARER_$u=\$(login $u $u-table-pw-1)"
	eval "tok=\$BEARER_$u"
	eval "BASIC_$u=\$(as \"\$tok\" -X POST \"\$API/users/$u/tokens\" -d '{}' | js 'd[\"secret\"]')"
done
BEARER_alice_view=$(as "$BEARER_alice" -X POST "$API/users/alice/tokens" -d '{"spec":{"role":"view"}}' | js 'd["secret"]')
BASIC_alice_view=$BEARER_alice_view
BEARER_root_edit=$(as "$BEARER_root" -X POST "$API/users/root/tokens" -d '{"spec":{"role":"edit"}}' | js 'd["secret"]')
BASIC_root_edit=$BEARER_root_edit
expect_match "every principal has its credentials" '^(rzt_[^ ]+ ){2}$' "$BEARER_alice_view $BEARER_root_edit "
bearer() { eval "echo \"\$BEARER_$(echo "$1" | tr - _)\""; }
basic() { eval "echo \"\$BASIC_$(echo "$1" | tr - _)\""; }

# --- the rules (docs/security.md), as a small function of principal and tenant
rank() { case $1 in view) echo 1 ;; edit) echo 2 ;; admin) echo 3 ;; *) echo 0 ;; esac; }
global_of() { # PRINCIPAL: its role on the installation (a token's capped)
	case $1 in dave) echo view ;; root) echo admin ;; root-edit) echo edit ;; *) echo none ;; esac
}
cap_of() { # PRINCIPAL: its token's role (a session's: admin)
	case $1 in alice-view) echo view ;; root-edit) echo edit ;; *) echo admin ;; esac
}
bound_on() { # PRINCIPAL TENANT: what the bindings grant its user there
	case "$1:$2" in
	alice*:t-a1 | alice*:t-a2) echo edit ;;
	bob:t-b1) echo view ;;
	carol:t-a1 | carol:t-a2) echo admin ;;
	*) echo none ;;
	esac
}
role_on() { # PRINCIPAL TENANT: the rank of the higher of its role and its bindings' (capped)
	g=$(rank "$(global_of "$1")") b=$(rank "$(bound_on "$1" "$2")") c=$(rank "$(cap_of "$1")")
	[ "$b" -gt "$c" ] && b=$c
	[ "$g" -gt "$b" ] && echo "$g" || echo "$b"
}
may() { # PRINCIPAL TENANT NEED: allow or deny
	[ "$(role_on "$1" "$2")" -ge "$(rank "$3")" ] && echo allow || echo deny
}
visible() { # PRINCIPAL: the tenants it may see (lists across tenants show those)
	v=""
	for t in $TENANTS; do [ "$(may "$1" "$t" view)" = allow ] && v="$v $t"; done
	echo "${v# }"
}
may_global() { # PRINCIPAL ROUTE: allow or deny, for the routes that name no tenant
	case $2 in
	list-tenants) echo allow ;; # view, or for role none a list of its tenants only
	audit)                      # admin, or a tenant's admin: its tenants' rows
		a=deny
		[ "$(rank "$(global_of "$1")")" -ge 3 ] && a=allow
		for t in $TENANTS; do [ "$(may "$1" "$t" admin)" = allow ] && a=allow; done
		echo $a
		;;
	bind) [ "$(rank "$(global_of "$1")")" -ge 3 ] && echo allow || echo deny ;; # an admin's
	esac
}
class() { # HTTP-CODE: allow, deny (403), or the code itself (401, 000: never right here)
	case $1 in 401 | 000) echo "$1" ;; 403) echo deny ;; *) echo allow ;; esac
}

# --- the table: ROUTE NEED METHOD PATH (@ = the tenant) [BODY]
call() { # PRINCIPAL METHOD PATH [BODY]: the status code
	if [ "$3" != "${3#/tfstate}" ]; then
		curl -s -o /dev/null -w '%{http_code}' -X "$2" -u "x:$(basic "$1")" \
			-H 'Content-Type: application/json' ${4:+-d "$4"} "$BASE$3"
	else
		curl -s -o /dev/null -w '%{http_code}' -X "$2" -H "Authorization: Bearer $(bearer "$1")" \
			-H "Content-Type: ${CTYPE:-application/json}" ${4:+-d "$4"} "$API$3"
	fi
}
cat >"$WORK/routes" <<'ROUTES'
get-tenant|view|GET|/tenants/@|
list-nodegroups|view|GET|/tenants/@/nodegroups|
create-nodegroup|edit|POST|/tenants/@/nodegroups|{"metadata":{"name":"ng-table"},"spec":{"role":"nope"}}
patch-tenant|edit|PATCH|/tenants/@|{"metadata":{"labels":{"touched":"yes"}}}
approve-run|edit|POST|/tenants/@/runs/no-such-run/approve|{}
cancel-run|edit|POST|/tenants/@/runs/no-such-run/cancel|{}
kubeconfig|edit|GET|/tenants/@/kubeconfig|
tfstate-get|edit|GET|/tfstate/@|
tfstate-lock|edit|LOCK|/tfstate/@|{"ID":"table-lock","Operation":"OperationTypePlan","Who":"table"}
list-events|view|GET|/tenants/@/events|
list-core-events|view|GET|/namespaces/@/events|
get-scale|view|GET|/tenants/@/nodegroups/cp/scale|
patch-scale|edit|PATCH|/tenants/@/nodegroups/cp/scale|{"spec":{"replicas":-1}}
ROUTES
for p in $PRINCIPALS; do
	while IFS='|' read -r route need method path body; do
		want="" got="" codes=""
		for t in $TENANTS; do
			ctype=application/json
			[ "$method" = PATCH ] && ctype=application/merge-patch+json
			c=$(CTYPE=$ctype call "$p" "$method" "$(echo "$path" | sed "s/@/$t/")" "$body")
			if [ "$route" = tfstate-lock ] && [ "$c" = 200 ]; then # let the engine's runs have it
				call "$p" UNLOCK "/tfstate/$t" "$body" >/dev/null
			fi
			want="$want $(may "$p" "$t" "$need")"
			got="$got $(class "$c")"
			codes="$codes $t:$c"
		done
		expect_eq "$p $route ($need) on$codes" "$want" "$got"
	done <"$WORK/routes"
	for route in list-tenants audit bind; do
		case $route in
		list-tenants) c=$(call "$p" GET /tenants) ;;
		audit) c=$(call "$p" GET "/audit?limit=5") ;;
		bind) c=$(call "$p" POST /accessbindings '{"metadata":{"name":"table-bad"},"spec":{}}') ;;
		esac
		expect_eq "$p $route: $c" "$(may_global "$p" "$route")" "$(class "$c")"
	done
	expect_eq "$p lists the tenants the rules let it see: $(visible "$p")" "$(visible "$p")" \
		"$(as "$(bearer "$p")" "$API/tenants" | js '" ".join(sorted(i["metadata"]["name"] for i in d["items"]))')"
done

# the audit log of one's tenants: carol (admin of team=a by her group) reads those rows only,
# page by page; root reads the others too
audit_tenants() { # TOKEN QUERY: the tenants the rows are about ("-" for none), sorted, unique
	as "$1" "$API/audit$2" | js '" ".join(sorted({(i["name"] if i["kind"] == "Tenant" and not i["tenant"] else i["tenant"]) or "-" for i in d["items"]}))'
}
expect_eq "carol's audit log: rows of t-a1 and t-a2 only" "t-a1 t-a2" "$(audit_tenants "$BEARER_carol" "?limit=5000")"
expect_eq "root's: every tenant's, and rows of no tenant" "- t-a1 t-a2 t-b1" "$(audit_tenants "$BEARER_root" "?limit=5000")"
cont=$(as "$BEARER_carol" "$API/audit?limit=2" | js 'd["metadata"]["continue"]')
page2=$(audit_tenants "$BEARER_carol" "?limit=2&continue=$cont")
expect_match "carol's second page (limit=2): rows of t-a1 or t-a2 only" '^(t-a1|t-a2|t-a1 t-a2)$' "$page2"
expect_eq "carol filtering on t-b1 gets nothing" "" "$(audit_tenants "$BEARER_carol" "?tenant=t-b1")"

# --- kubectl: get -A, auth can-i, get -w
k() { # PRINCIPAL kubectl-args...: its output (kubectl's warnings, on stderr, aside)
	p=$1
	shift
	timeout 30 kubectl --server="$BASE" --token="$(bearer "$p")" --certificate-authority="$CA" \
		--request-timeout=20s "$@" 2>"$WORK/kubectl.err"
}
for p in $PRINCIPALS; do
	expect_eq "kubectl get tenants -A as $p: $(visible "$p")" "$(visible "$p")" \
		"$(k "$p" get tenants -A --no-headers | awk '{ print $1 }' | sort | tr '\n' ' ' | sed 's/ $//')"
	want="" got=""
	for t in $TENANTS; do
		for vn in "get nodegroups -n $t:view" "create nodegroups -n $t:edit" "patch tenants/$t:edit"; do
			want="$want $(may "$p" "$t" "${vn#*:}" | sed 's/allow/yes/; s/deny/no/')"
			# shellcheck disable=SC2086 # the verb and resource are words
			got="$got $(k "$p" auth can-i ${vn%:*} | cut -d' ' -f1)"
		done
	done
	expect_eq "kubectl auth can-i as $p (get/create nodegroups, patch the tenant × $TENANTS)" "$want" "$got"
done
# a watch across tenants as alice: a change in t-a1 shows, one in t-b1 does not
label() { # TENANT VALUE: root labels the tenant's node group
	curl -s -o /dev/null -w '%{http_code}' -X PATCH -H "Authorization: Bearer $BEARER_root" \
		-H 'Content-Type: application/merge-patch+json' "$API/tenants/$1/nodegroups/cp" \
		-d "{\"metadata\":{\"labels\":{\"seen\":\"$2\"}}}"
}
timeout 10 kubectl --server="$BASE" --token="$BEARER_alice" --certificate-authority="$CA" \
	get nodegroups -A -w -o jsonpath='{.metadata.namespace} {.metadata.labels.seen}{"\n"}' \
	>"$WORK/kwatch.out" 2>"$WORK/kwatch.err" &
KW=$!
sleep 2.5
expect_eq "root labels the node groups of t-b1 (hidden from alice) and t-a1" "200 200" \
	"$(label t-b1 hidden) $(label t-a1 shown)"
wait "$KW" 2>/dev/null
expect_eq "kubectl get nodegroups -A -w as alice: t-a1 and t-a2, then t-a1's change; nothing of t-b1" \
	"t-a1 t-a2 t-a1:shown no-t-b1" \
	"$(sed -n '1,2s/ .*//p' "$WORK/kwatch.out" | sort | tr '\n' ' ')$(grep -q '^t-a1 shown$' "$WORK/kwatch.out" && echo t-a1:shown) $(grep -q '^t-b1' "$WORK/kwatch.out" && echo t-b1-leaked || echo no-t-b1)"

# --- the Python client (python3-kubernetes' DynamicClient): each principal's tenants
cat >"$WORK/py.py" <<'PYEOF'
import sys
from kubernetes import client, dynamic
host, ca = sys.argv[1], sys.argv[2]
for arg in sys.argv[3:]:
    who, tok = arg.split("=", 1)
    c = client.Configuration()
    c.host, c.ssl_ca_cert = host, ca
    c.api_key = {"authorization": "Bearer " + tok}
    d = dynamic.DynamicClient(client.ApiClient(c))
    tenants = d.resources.get(api_version="rezuscloud.io/v1", kind="Tenant")
    print(who + ":" + " ".join(sorted(i.metadata.name for i in tenants.get().items)))
PYEOF
want="" args=""
for p in $PRINCIPALS; do
	want="$want|$p:$(visible "$p")"
	args="$args $p=$(bearer "$p")"
done
# shellcheck disable=SC2086 # one argument per principal
expect_eq "the Python client lists each principal's tenants as the rules say" "${want#|}" \
	"$(/usr/bin/python3 "$WORK/py.py" "$BASE" "$CA" $args 2>&1 | tr '\n' '|' | sed 's/|$//')"

expect_eq "no password or token in the log" "0" \
	"$(grep -c -e table-pw-1 -e table-admin-pw -e "$BEARER_alice_view" -e "$BEARER_root_edit" "$WORK/daemon.log")"
stop_proc "$DAEMON_PID" "the daemon"
done_testing
