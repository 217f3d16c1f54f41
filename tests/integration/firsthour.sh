#!/bin/sh
# The first hour of a new user: a machine with terraform and no tofu runs on the default
# tofu.binary (the fallback is logged); /readyz names the loaded plugins and is not ready
# with none (no tenant could be realised).
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
  sim: {}
CONF
DAEMON=$REZUSCLOUD
REZUSCLOUD="$WORK/rezuscloud"
if start_daemon "$WORK/tf.log" -c "$WORK/rezus.conf"; then
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

done_testing
