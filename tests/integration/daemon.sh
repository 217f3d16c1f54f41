#!/bin/sh
# The built rezuscloud as an operator runs it: service endpoints over real HTTP, the data
# dir lock, SIGTERM and SIGHUP, configuration errors and their exit code.
. "${top_srcdir:-.}/tests/integration/lib.sh"

DATA="$WORK/data"
# /readyz needs tofu.binary to exist (it defaults to tofu): the installed one, or a shell,
# which no test here runs.
REZUSCLOUD_TOFU_BINARY=$(command -v tofu || command -v terraform || echo /bin/sh)
export REZUSCLOUD_TOFU_BINARY
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $DATA
log:
  level: info
  file: $WORK/rezus.log
plugin_dir: $top_builddir/plugins
plugins:
  sim: {}
CONF

# --- a good start -----------------------------------------------------------------
READY_LOG="$WORK/rezus.log" # the ready line goes to log.file, not stderr
if start_daemon "$WORK/stderr.log" -c "$WORK/rezus.conf" --log-level info; then
	ok "daemon starts and logs its ready line"
else
	not_ok "daemon starts and logs its ready line" "$(cat "$WORK/stderr.log" "$WORK/rezus.log" 2>/dev/null)"
fi
READY_LOG=""
BASE="http://127.0.0.1:$PORT"

expect_eq "GET /healthz answers ok" "ok" "$(curl -sf "$BASE/healthz")"
expect_eq "GET /readyz answers 200" "200" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")"
version=$(curl -sf "$BASE/version")
expect_match "GET /version reports version, commit and ABI" \
	'^\{"version":"[0-9.]+","commit":"[^"]+","abi":"1\.3",' "$version"
expect_match "and Kubernetes' version.Info fields beside them" \
	'"major":"[0-9]+","minor":"[0-9]+","gitVersion":"v[0-9.]+","gitCommit":"[^"]+",.*"platform":"linux/[a-z0-9]+"\}$' "$version"
headers=$(curl -s -D - -o "$WORK/404.json" "$BASE/nope")
expect_match "unknown path is a 404" '^HTTP/1.1 404 ' "$headers"
expect_match "every response carries X-Request-ID" '^X-Request-ID: [0-9a-f]{32}' "$headers"
expect_match "404 body is a Kubernetes Status" '"kind":"Status".*"reason":"NotFound".*"code":404' \
	"$(cat "$WORK/404.json")"
expect_eq "data dir is created 0700" "700" "$(stat -c %a "$DATA")"
expect_match "access log line per request" 'subsys=http msg=request method=GET path=/healthz status=200' \
	"$(cat "$WORK/rezus.log")"
expect_eq "nothing is written to stdout" "" "$(cat "$WORK/stderr.log.stdout")"

# --- a second instance on the same data dir ----------------------------------------------
"$REZUSCLOUD" -c "$WORK/rezus.conf" --log-level info 2>"$WORK/second.log" &
second=$!
wait_exit $second 5
expect_eq "second instance on the same data dir exits 1" "1" "$EXIT_STATUS"
expect_match "second instance names the holder" \
	"data dir '$DATA' is in use by another rezuscloud \(pid $DAEMON_PID\)" \
	"$(cat "$WORK/second.log" "$WORK/rezus.log")"

# --- SIGHUP reopens the log file ------------------------------------------------------
mv "$WORK/rezus.log" "$WORK/rezus.log.1"
kill -HUP "$DAEMON_PID"
for _ in $(seq 1 100); do [ -s "$WORK/rezus.log" ] && break; sleep 0.05; done
expect_match "SIGHUP reopens the log file" 'msg="log reopened"' "$(cat "$WORK/rezus.log" 2>/dev/null)"

# --- SIGTERM ----------------------------------------------------------------------------
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 2
expect_eq "SIGTERM exits 0 within 2 s" "0" "$EXIT_STATUS"
DAEMON_PID=""
expect_match "shutdown is logged" 'msg="stopped cleanly"' "$(cat "$WORK/rezus.log")"

# --- configuration errors -----------------------------------------------------------------
printf 'server:\n  listen: 127.0.0.1:0\n  data_dir: %s\ntofu:\n  wrkers: 4\n' "$DATA" >"$WORK/bad.conf"
"$REZUSCLOUD" -c "$WORK/bad.conf" 2>"$WORK/bad.log"
expect_eq "broken config exits 2" "2" "$?"
expect_match "broken config names file:line and key" \
	"$WORK/bad.conf:5: unknown key 'tofu.wrkers'" "$(cat "$WORK/bad.log")"

"$REZUSCLOUD" -c "$WORK/rezus.conf" --check-config 2>"$WORK/check.log"
expect_eq "--check-config on a good file exits 0" "0" "$?"
"$REZUSCLOUD" -c "$WORK/bad.conf" --check-config 2>/dev/null
expect_eq "--check-config on a bad file exits 2" "2" "$?"
"$REZUSCLOUD" -c "$WORK/missing.conf" 2>"$WORK/missing.log"
expect_eq "a missing -c file exits 2" "2" "$?"
"$REZUSCLOUD" --bogus 2>/dev/null
expect_eq "an unknown option exits 2" "2" "$?"

expect_match "--version prints the version" '^rezuscloud [0-9.]+ \(commit .*, plugin ABI 1\.3\)$' \
	"$("$REZUSCLOUD" --version)"
expect_match "--help documents --check-config" '--check-config' "$("$REZUSCLOUD" --help)"

# the original RezusCloud's variables and routes are refused with what takes their place
expect_match "REZUSCLOUD_MODE is refused, saying there are no modes" \
	'environment REZUSCLOUD_MODE: not a setting of this RezusCloud: there are no modes.*docs/migration.md' \
	"$(REZUSCLOUD_MODE=server "$REZUSCLOUD" -c "$WORK/rezus.conf" --check-config 2>&1)"
expect_match "REZUSCLOUD_JWT_SECRET names auth.jwt_secret_file" \
	'REZUSCLOUD_JWT_SECRET: not a setting of this RezusCloud: auth.jwt_secret_file' \
	"$(REZUSCLOUD_JWT_SECRET=s "$REZUSCLOUD" -c "$WORK/rezus.conf" --check-config 2>&1)"

# --- the embedded default -----------------------------------------------------------------
mkdir "$WORK/cwd"
cd "$WORK/cwd" || exit 1
# a first start that cannot bind its port creates no admin: the next start prints the
# one-time password (before, it was printed by the start that failed, then never again)
/usr/bin/python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)' >"$WORK/busy.port" &
BUSY_PID=$!
for _ in $(seq 1 50); do [ -s "$WORK/busy.port" ] && break; sleep 0.1; done
"$REZUSCLOUD" --listen "127.0.0.1:$(cat "$WORK/busy.port")" >"$WORK/busy.log" 2>&1
expect_match "a start whose port is taken fails, saying so" 'Address already in use' "$(cat "$WORK/busy.log")"
expect_eq "and creates no admin (no password printed to lose)" "0" "$(grep -c 'one-time password' "$WORK/busy.log")"
kill "$BUSY_PID" 2>/dev/null
wait "$BUSY_PID" 2>/dev/null
if start_daemon "$WORK/embedded.log" --listen 127.0.0.1:0; then
	ok "starts with no configuration file at all"
else
	not_ok "starts with no configuration file at all" "$(cat "$WORK/embedded.log")"
fi
expect_match "embedded default is announced" 'starting on the embedded default' "$(cat "$WORK/embedded.log")"
expect_eq "embedded default keeps data in ./rezus-data" "700" "$(stat -c %a "$WORK/cwd/rezus-data")"
expect_eq "embedded default serves /readyz" "200" \
	"$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")"
expect_match "the original's /health is a 404 naming /healthz and /readyz" \
	'"message":"the server could not find the requested resource: the daemon.s health is /healthz, its readiness /readyz".*"code":404' \
	"$(curl -s "http://127.0.0.1:$PORT/health")"
# --- the first start's admin --------------------------------------------------------------
API="http://127.0.0.1:$PORT/api/v1"
OTP=$(sed -n "s/.*first start: sign in as 'admin' with the one-time password \([^ ]*\) .*/\1/p" "$WORK/embedded.log")
expect_match "the first start prints a one-time admin password" '^[A-Za-z0-9_-]{20,}$' "$OTP"
expect_eq "once, after the ready line, with what to do next" \
	"msg=ready|first start: sign in as 'admin'|first start: open http://127.0.0.1:$PORT/ in a browser, or: rezusctl login http://127.0.0.1:$PORT --username admin|first start: lost the password? rezuscloud admin reset-password" \
	"$(grep -o "msg=ready\|first start: [^(]*admin'\|first start: open .*--username admin\|first start: lost the password? rezuscloud admin reset-password" "$WORK/embedded.log" | tr '\n' '|' | sed 's/|$//')"
expect_eq "and nowhere else" "1" "$(grep -c -- "$OTP" "$WORK/embedded.log")"
expect_eq "the API needs credentials" "401" "$(curl -s -o /dev/null -w '%{http_code}' "$API/tenants")"
curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
	-d "{\"username\":\"admin\",\"password\":\"$OTP\"}" >"$WORK/login.json"
TOKEN=$(sed -n 's/.*"token":"\([^"]*\)".*/\1/p' "$WORK/login.json")
expect_match "logging in with it must change the password" '"mustChangePassword":true' "$(cat "$WORK/login.json")"
expect_eq "nothing else until the password changes" "403" \
	"$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$API/tenants")"
expect_eq "the password changes" "200" "$(curl -s -o /dev/null -w '%{http_code}' -X POST \
	-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
	-d "{\"currentPassword\":\"$OTP\",\"newPassword\":\"a-new-admin-password\"}" "$API/auth/password")"
expect_eq "then the API answers" "200" \
	"$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$API/tenants")"
# a lost password: rezuscloud admin reset-password, offline
out=$("$REZUSCLOUD" admin reset-password 2>&1)
expect_match "admin reset-password is refused while the daemon holds the data dir" \
	"^1:rezuscloud admin: data dir '.*rezus-data' is in use by another rezuscloud \\(pid $DAEMON_PID\\)" "$?:$out"
kill -INT "$DAEMON_PID"
wait_exit "$DAEMON_PID" 5
out=$("$REZUSCLOUD" admin reset-password 2>&1)
expect_match "with the daemon stopped it prints a new one-time password" \
	"^0:'admin' signs in with the one-time password [A-Za-z0-9_-]{20,} \\(it must be changed at that sign-in\\); its sessions ended$" "$?:$out"
NEW=$(printf '%s\n' "$out" | sed -n 's/.*one-time password \([^ ]*\) .*/\1/p')
out=$("$REZUSCLOUD" admin reset-password nobody 2>&1)
expect_match "an unknown user is named" '^1:rezuscloud admin: users "nobody" not found$' "$?:$out"
# a later start with REZUSCLOUD_ADMIN_PASSWORD says it is ignored, and why
if REZUSCLOUD_ADMIN_PASSWORD=ignored-password start_daemon "$WORK/embedded2.log" --listen 127.0.0.1:0; then
	expect_match "REZUSCLOUD_ADMIN_PASSWORD on an existing data dir is said to be ignored" \
		'configured admin password .* is ignored: it sets the first admin.s password only.*rezuscloud admin reset-password' \
		"$(cat "$WORK/embedded2.log")"
	API="http://127.0.0.1:$PORT/api/v1"
	expect_eq "the reset ended the admin's sessions" "401" \
		"$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$API/tenants")"
	expect_eq "the password before the reset no longer signs in" "401" \
		"$(curl -s -o /dev/null -w '%{http_code}' -X POST "$API/auth/login" -H 'Content-Type: application/json' \
			-d '{"username":"admin","password":"a-new-admin-password"}')"
	curl -s -X POST "$API/auth/login" -H 'Content-Type: application/json' \
		-d "{\"username\":\"admin\",\"password\":\"$NEW\"}" >"$WORK/login2.json"
	expect_match "the reset's password signs in, and must be changed" '"mustChangePassword":true' "$(cat "$WORK/login2.json")"
	TOKEN=$(sed -n 's/.*"token":"\([^"]*\)".*/\1/p' "$WORK/login2.json")
	curl -s -o /dev/null -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
		-d "{\"currentPassword\":\"$NEW\",\"newPassword\":\"a-third-admin-password\"}" "$API/auth/password"
	expect_match "the reset is in the audit log, without the password" \
		'"user":"rezuscloud admin reset-password".*"verb":"reset-password".*"name":"admin"' \
		"$(curl -s -H "Authorization: Bearer $TOKEN" "$API/audit?verb=reset-password" | grep -v -- "$NEW")"
fi
kill -INT "$DAEMON_PID"
wait_exit "$DAEMON_PID" 2
expect_eq "SIGINT exits 0" "0" "$EXIT_STATUS"
DAEMON_PID=""

# The man page documents every option --help lists.
help_opts=$("$REZUSCLOUD" --help | grep -o -- '--[a-z-]*' | sort -u | tr '\n' ' ')
man_opts=$(sed 's/\\-/-/g' "$top_srcdir/man/rezuscloud.8" | grep -o -- '--[a-z-]*' | sort -u | tr '\n' ' ')
expect_eq "rezuscloud(8) documents exactly the options of --help" "$help_opts" "$man_opts"
# rezus.conf(5) documents every setting of the schema table (sections aside).
keys=$(sed -n 's/.*{ \.key = "\([a-z0-9_.]*\)".*/\1/p' "$top_srcdir/core/base/settings.c" |
	grep -v '^\(server\|server\.tls\|auth\|auth\.oidc\|tofu\|observe\|talos\|upgrade\|kubectl\|events\|audit\|backup\|etcd_backup\|etcd_backup\.s3\|store\|web\|runners\|runner\|log\)$' | sort -u | tr '\n' ' ')
documented=$(sed -n 's/^\.B \([a-z0-9_.]*\)$/\1/p' "$top_srcdir/man/rezus.conf.5" | sort -u | tr '\n' ' ')
expect_eq "rezus.conf(5) documents exactly the settings of the schema" "$keys" "$documented"
# docs/configuration.md's overview names every one of them too.
undocumented=""
for k in $keys; do
	grep -qF "\`$k\`" "$top_srcdir/docs/configuration.md" || undocumented="$undocumented $k"
done
expect_eq "docs/configuration.md names every setting of the schema" "" "$undocumented"
# The installed rezus.conf (written from the same table at build time) carries every key,
# commented out with its default, in its section; it loads the platform plugins and
# --check-config accepts it as it is.
CONF="$top_builddir/packaging/rezus.conf"
all_keys=$(sed -n 's/.*{ \.key = "\([a-z0-9_.]*\)".*/\1/p' "$top_srcdir/core/base/settings.c" | sort -u | tr '\n' ' ')
conf_keys=$(awk '
	/^ *#?[a-z0-9_]+:/ {
		ind = match($0, /[^ ]/) - 1; d = ind / 2; s = substr($0, ind + 1)
		c = substr(s, 1, 1) == "#"; if (c) s = substr(s, 2)
		name = s; sub(/:.*/, "", name)
		path = name; for (i = d - 1; i >= 0; i--) path = stack[i] "." path
		if (d > 0 && stack[0] == "plugins") next
		if (!c && s ~ /^[a-z0-9_]+:$/) { stack[d] = name; print path; next }
		if (c || name == "plugins") print path
	}' "$CONF" | sort -u | tr '\n' ' ')
expect_eq "the installed rezus.conf lists every setting of the schema" "$all_keys" "$conf_keys"
expect_eq "every one commented out, sections aside" "" \
	"$(grep -E '^ *[a-z_]+: *[^ {]' "$CONF" | grep -v '^  [a-z]*: {}$')"
expect_match "it loads the platform plugins" "^  talos: \{\}$" "$(grep -A6 '^plugins:' "$CONF")"
expect_eq "and --check-config accepts it as shipped" "0" \
	"$(REZUSCLOUD_PLUGIN_DIR="$top_builddir/plugins/.libs" "$REZUSCLOUD" --check-config -c "$CONF" >"$WORK/conf.out" 2>&1; echo $?)"
done_testing
