#!/bin/sh
# The first hour of a new user: a machine with terraform and no tofu runs on the default
# tofu.binary (the fallback is logged) and realises examples/sim/, the README's first
# apply; /readyz names the loaded plugins and is not ready with none (no tenant could be
# realised); tools/run builds every plugin, and the README's Platforms config loads them.
. "${top_srcdir:-.}/tests/integration/lib.sh"

TF=$(command -v terraform || true)
if [ -z "$TF" ]; then
	echo "1..0 # SKIP terraform is not installed"
	exit 0
fi
mkdir -p "$WORK/bin"
ln -s "$TF" "$WORK/bin/terraform"
# The daemon alone runs with that PATH (the script's own tools need the usual one).
printf '#!/bin/sh\nPATH="%s" exec "%s" "$@"\n' "$WORK/bin" "$REZUSCLOUD" >"$WORK/rezuscloud"
chmod +x "$WORK/rezuscloud"

# --- tofu.binary: tofu, else terraform on PATH -------------------------------------------
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
plugin_dir: $top_builddir/plugins
plugins:
  sim: {stageMs: 50}
CONF
DAEMON=$REZUSCLOUD
REZUSCLOUD="$WORK/rezuscloud"
if REZUSCLOUD_ADMIN_PASSWORD=first-hour-password start_daemon "$WORK/tf.log" -c "$WORK/rezus.conf"; then
	ok "the daemon starts with only terraform on PATH"
else
	not_ok "the daemon starts with only terraform on PATH" "$(cat "$WORK/tf.log")"
fi
BASE="http://127.0.0.1:$PORT"
expect_eq "and is ready: /readyz answers 200" "200" \
	"$(curl -s -o "$WORK/ready.out" -w '%{http_code}' "$BASE/readyz")"
expect_match "the start logs that terraform stands in for tofu" \
	"tofu.binary.*terraform" "$(grep -i 'terraform' "$WORK/tf.log")"
expect_match "/readyz?verbose names the loaded plugins" 'plugins ok: sim' \
	"$(curl -s "$BASE/readyz?verbose")"
# The README's first apply, on a daemon that loads only sim (as the embedded default).
CTL="$top_builddir/rezusctl"
export HOME="$WORK/home"
mkdir -p "$HOME"
unset REZUSCLOUD_SERVER REZUSCLOUD_TOKEN
echo first-hour-password | "$CTL" login "$BASE" --username admin --password-stdin >/dev/null 2>&1
"$CTL" apply -f "$top_srcdir/examples/sim/" >"$WORK/apply.out" 2>&1
expect_eq "apply -f examples/sim/ creates the tenant and its node groups" \
	"0 tenant/demo created|nodegroup/cp created|nodegroup/workers created|" \
	"$? $(tr '\n' '|' <"$WORK/apply.out")"
for _ in $(seq 1 300); do
	"$CTL" get tenant demo -o json 2>/dev/null | grep -q '"phase": "Ready"' && break
	sleep 0.1
done
expect_match "and terraform realises it: the tenant is Ready" '"phase": "Ready"' \
	"$("$CTL" get tenant demo -o json 2>&1)"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
REZUSCLOUD=$DAEMON

# --- no plugin: not ready ----------------------------------------------------------------
cat >"$WORK/none.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data2
tofu:
  binary: $TF
CONF
if start_daemon "$WORK/none.log" -c "$WORK/none.conf"; then
	ok "a daemon with no plugin starts"
else
	not_ok "a daemon with no plugin starts" "$(cat "$WORK/none.log")"
fi
code=$(curl -s -o "$WORK/none.out" -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")
expect_eq "but /readyz answers 503" "503" "$code"
expect_match "naming the reason" 'no plugin is loaded' "$(cat "$WORK/none.out")"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10

# --- tools/run and the README's Platforms step ------------------------------------------
targets=$(sed -n 's/^make .*-j[^ ]* \(.*\) >.*/\1/p' "$top_srcdir/tools/run")
missing=""
for mk in "$top_srcdir"/plugins/*/local.mk; do
	name=$(basename "$(dirname "$mk")")
	[ "$name" = kit ] && continue
	case " $targets " in *" all "* | *" plugins/$name.la "*) ;; *) missing="$missing $name" ;; esac
done
expect_eq "tools/run builds every plugin (make $targets)" "" "$missing"
sed -n '/^cat >rezus.conf <<EOF$/,/^EOF$/p' "$top_srcdir/README.md" | sed '1d;$d' |
	sed "s|\$PWD/build/default/plugins|$top_builddir/plugins|; s|\./rezus-data|$WORK/readme-data|" \
		>"$WORK/readme.conf"
expect_match "the README's Platforms step writes a config naming plugin_dir" '^plugin_dir: ' \
	"$(cat "$WORK/readme.conf")"
"$REZUSCLOUD" --check-config -c "$WORK/readme.conf" >"$WORK/check.out" 2>&1
expect_eq "and every platform plugin it lists loads (--check-config)" "0 5" \
	"$? $(grep -Ec '^  (sim|talos|oci|openstack|metal): \{\}$' "$WORK/readme.conf")"

done_testing
