#!/bin/sh
# tests/integration/offsite.sh - core/offsite (docs/backups.md, "Targets" and "Encryption")
# against a real S3-compatible server on loopback: s3rver from npm (tools/install-deps pins
# it into build/node), driven by tests/integration/rzoffsite, one call of the module per
# command. A snapshot is sealed, uploaded path-style and virtual-host, listed, pruned,
# downloaded and opened to the same SHA-256; the bucket holds no byte of the plain text
# and a copy is useless without the key file; wrong credentials, a missing bucket, an
# unreachable endpoint and a stalled server give clear errors and leave nothing usable;
# over TLS the server's certificate is checked, against caFile when it is set.
#
# s3rver 3.7.1 checks the access key id but not SigV4 signatures (its V4 check is
# unimplemented): a wrong access key is refused here, a wrong secret only by a real S3.
# tests/unit/check_offsite.c checks the signatures libcurl makes against AWS's published
# example instead.
. "${top_srcdir:-.}/tests/integration/lib.sh"

T="$top_builddir/tests/integration/rzoffsite"
NODE_DIR="${NODE_TREE:-$top_srcdir/build/node}/node_modules"
if ! command -v node >/dev/null 2>&1 || [ ! -f "$NODE_DIR/s3rver/bin/s3rver.js" ]; then
	if [ -f "${NODE_TREE:-$top_srcdir/build/node}/.installed" ]; then
		not_ok "node and s3rver are installed in build/node (tools/install-deps)"
		done_testing
		exit 1
	fi
	echo "1..0 # SKIP needs node and s3rver in build/node (tools/install-deps)"
	exit 0
fi

S3PORT=$(free_port)
mkdir "$WORK/bucket"
# --service-endpoint localhost: s3rver reads the bucket from a host name BUCKET.s3.localhost
# (virtual-host addressing; *.localhost is loopback to libcurl)
node "$NODE_DIR/s3rver/bin/s3rver.js" -d "$WORK/bucket" -a 127.0.0.1 -p "$S3PORT" \
	--service-endpoint localhost --configure-bucket snaps --silent >"$WORK/s3rver.log" 2>&1 &
S3PID=$!
TLSPID=
stop_s3() {
	kill -CONT "$S3PID" 2>/dev/null
	kill -TERM "$S3PID" $TLSPID 2>/dev/null
	wait "$S3PID" $TLSPID 2>/dev/null
}
trap 'stop_s3; cleanup' EXIT
for _ in $(seq 1 100); do
	curl -s -o /dev/null "http://127.0.0.1:$S3PORT/" && break
	sleep 0.1
done
check "s3rver answers on 127.0.0.1:$S3PORT" curl -s -o /dev/null "http://127.0.0.1:$S3PORT/"

SECRET="secret-key-$$-never-shown"
printf '# the credentials\n[default]\naws_access_key_id = S3RVER\naws_secret_access_key = %s\n' \
	"$SECRET" >"$WORK/cred"
printf 'aws_access_key_id = NOSUCHKEY\naws_secret_access_key = %s\n' "$SECRET" >"$WORK/cred.wrong"
chmod 600 "$WORK/cred" "$WORK/cred.wrong"
conf() { # ENDPOINT PATHSTYLE [BUCKET] [CRED] [TIMEOUT]
	printf '{"type":"s3","endpoint":"%s","bucket":"%s","prefix":"rezus","region":"us-east-1",' \
		"$1" "${3:-snaps}"
	printf '"credentialsFile":"%s","pathStyle":%s,"timeoutSeconds":%s}' \
		"${4:-$WORK/cred}" "$2" "${5:-20}"
}
PATHS=$(conf "http://127.0.0.1:$S3PORT" true)
VHOST=$(conf "http://s3.localhost:$S3PORT" false)

# --- seal
MARKER="etcd-plaintext-marker-$$"
{
	echo "$MARKER"
	head -c 3145728 /dev/urandom
	echo "$MARKER"
} >"$WORK/snap.db"
PLAIN_SHA=$(sha256sum "$WORK/snap.db" | cut -d' ' -f1)
PLAIN_SIZE=$(stat -c %s "$WORK/snap.db")
out=$("$T" seal "$WORK/seal.keys" "$WORK/snap.db" "$WORK/snap.sealed" 2>"$WORK/seal.err")
expect_eq "sealing reports the plain text's size and SHA-256" "$PLAIN_SIZE $PLAIN_SHA" "$out"
expect_eq "the key file is created 0600" "600" "$(stat -c %a "$WORK/seal.keys")"
expect_eq "the sealed file is 0600" "600" "$(stat -c %a "$WORK/snap.sealed")"
expect_eq "the sealed file holds no plain text" "0" "$(grep -c "$MARKER" "$WORK/snap.sealed")"

# --- upload, list (path-style)
expect_eq "where names the bucket and prefix" "s3://snaps/rezus/" "$("$T" where "$PATHS")"
check "put tenant-a/snap-1 (path-style)" "$T" put "$PATHS" tenant-a/snap-1 "$WORK/snap.sealed"
check "put tenant-a/snap-2" "$T" put "$PATHS" tenant-a/snap-2 "$WORK/snap.sealed"
check "put tenant-b/snap-1" "$T" put "$PATHS" tenant-b/snap-1 "$WORK/snap.sealed"
SEALED_SIZE=$(stat -c %s "$WORK/snap.sealed")
list=$("$T" list "$PATHS" tenant-a/ 2>&1)
expect_match "list tenant-a/: both, sorted, with size and time" \
	"^\[\{\"key\":\"tenant-a/snap-1\",\"size\":$SEALED_SIZE,\"modified\":\"20[0-9-]{8}T[0-9:.]{12}Z\"\},\{\"key\":\"tenant-a/snap-2\"" \
	"$list"
expect_eq "list of everything: three objects" "3" "$("$T" list "$PATHS" | grep -o '"key"' | wc -l)"
expect_eq "the objects are under the prefix in the bucket" "3" \
	"$(find "$WORK/bucket/snaps/rezus" -name '*._S3rver_object' | wc -l)"
expect_eq "what lands in the bucket holds no byte of the plain text's marker" "" \
	"$(grep -rl "$MARKER" "$WORK/bucket")"

# --- download, open, compare
check "get tenant-a/snap-1" "$T" get "$PATHS" tenant-a/snap-1 "$WORK/got.sealed"
out=$("$T" unseal "$WORK/seal.keys" "$WORK/got.sealed" "$WORK/got.db" 2>&1)
expect_eq "opened, it has the recorded size and SHA-256" "$PLAIN_SIZE $PLAIN_SHA" "$out"
check "and is the snapshot, byte for byte" cmp "$WORK/snap.db" "$WORK/got.db"
"$T" unseal "$WORK/other.keys" "$WORK/got.sealed" "$WORK/x.db" >/dev/null 2>"$WORK/other.err"
expect_match "without its key file a copy of the object opens to nothing" \
	"is sealed with key [0-9a-f]{32}, which key file '.*other.keys' does not hold" \
	"$(cat "$WORK/other.err")"
expect_eq "and writes nothing" "no" "$([ -e "$WORK/x.db" ] && echo yes || echo no)"

# --- rotation: the old objects still open, new ones use the new key
OLD_ID=$(sed -n 's/^\([0-9a-f]\{32\}\) .*/\1/p' "$WORK/seal.keys")
check "rotate the keys" "$T" rotate "$WORK/seal.keys"
NEW_ID=$(sed -n 's/^\([0-9a-f]\{32\}\) .*/\1/p' "$WORK/seal.keys" | tail -n 1)
"$T" seal "$WORK/seal.keys" "$WORK/snap.db" "$WORK/snap2.sealed" >/dev/null
expect_eq "a file sealed after the rotation names the new key" "$NEW_ID" \
	"$(od -An -tx1 -j8 -N16 "$WORK/snap2.sealed" | tr -d ' \n')"
expect_eq "one sealed before names the old" "$OLD_ID" \
	"$(od -An -tx1 -j8 -N16 "$WORK/got.sealed" | tr -d ' \n')"
expect_eq "the object sealed before the rotation still opens" "$PLAIN_SIZE $PLAIN_SHA" \
	"$("$T" unseal "$WORK/seal.keys" "$WORK/got.sealed" "$WORK/got2.db" 2>&1)"

# --- virtual-host addressing: http://snaps.s3.localhost:PORT/rezus/KEY
check "put tenant-c/snap-1 (virtual-host)" "$T" put "$VHOST" tenant-c/snap-1 "$WORK/snap2.sealed"
expect_match "path-style lists what virtual-host put in the same bucket" \
	'"key":"tenant-c/snap-1"' "$("$T" list "$PATHS" tenant-c/)"
check "get it back (virtual-host)" "$T" get "$VHOST" tenant-c/snap-1 "$WORK/vh.sealed"
check "the same bytes" cmp "$WORK/snap2.sealed" "$WORK/vh.sealed"
expect_match "virtual-host lists too" '"key":"tenant-c/snap-1"' "$("$T" list "$VHOST" tenant-c)"

# --- prune
check "delete tenant-a/snap-1" "$T" delete "$PATHS" tenant-a/snap-1
expect_match "the listing no longer has it" '^\[\{"key":"tenant-a/snap-2"[^]]*\}\]$' \
	"$("$T" list "$PATHS" tenant-a/)"
check "deleting what is absent is no error" "$T" delete "$PATHS" tenant-a/snap-1
"$T" get "$PATHS" tenant-a/snap-1 "$WORK/gone" >/dev/null 2>"$WORK/gone.err"
expect_eq "getting it names what is missing" "s3: no object 'tenant-a/snap-1' in s3://snaps/rezus/" \
	"$(cat "$WORK/gone.err")"

# --- failures: clear errors, and nothing listed
"$T" put "$(conf "http://127.0.0.1:$S3PORT" true snaps "$WORK/cred.wrong")" tenant-d/snap-1 \
	"$WORK/snap.sealed" >/dev/null 2>"$WORK/wrong.err"
expect_eq "wrong credentials: access denied, naming the credentials file" \
	"s3: access denied (403 InvalidAccessKeyId): check credentialsFile '$WORK/cred.wrong'" \
	"$(cat "$WORK/wrong.err")"
DEAD=$(free_port)
"$T" put "$(conf "http://127.0.0.1:$DEAD" true)" tenant-d/snap-1 "$WORK/snap.sealed" \
	>/dev/null 2>"$WORK/dead.err"
expect_eq "an unreachable endpoint: cannot reach it" \
	"s3: cannot reach http://127.0.0.1:$DEAD: Connection refused" "$(cat "$WORK/dead.err")"
"$T" list "$(conf "http://127.0.0.1:$S3PORT" true nosuch)" >/dev/null 2>"$WORK/nob.err"
expect_eq "a missing bucket: says so" "s3: bucket 'nosuch' does not exist at http://127.0.0.1:$S3PORT" \
	"$(cat "$WORK/nob.err")"
expect_eq "after them nothing of tenant-d is listed" "[]" "$("$T" list "$PATHS" tenant-d/)"

# A server that stops answering mid-upload: the PUT times out. s3rver keeps the part it got
# (a real S3 stores a PUT whole or not at all); the sealed format refuses it as truncated.
head -c 33554432 /dev/urandom >"$WORK/big.db"
"$T" seal "$WORK/seal.keys" "$WORK/big.db" "$WORK/big.sealed" >/dev/null
kill -STOP "$S3PID"
start=$(date +%s)
"$T" put "$(conf "http://127.0.0.1:$S3PORT" true snaps "$WORK/cred" 2)" tenant-e/snap-1 \
	"$WORK/big.sealed" >/dev/null 2>"$WORK/stall.err"
kill -CONT "$S3PID"
expect_eq "a stalled server: the upload times out, saying after how long" \
	"s3: put timed out after 2 s (timeoutSeconds) at http://127.0.0.1:$S3PORT" "$(cat "$WORK/stall.err")"
expect_match "within its timeout" '^[23]$' "$(($(date +%s) - start))"
sleep 0.5
if "$T" get "$PATHS" tenant-e/snap-1 "$WORK/half.sealed" 2>/dev/null; then
	"$T" unseal "$WORK/seal.keys" "$WORK/half.sealed" "$WORK/half.db" >/dev/null 2>"$WORK/half.err"
	expect_match "what s3rver kept of it opens to nothing: truncated" \
		"is truncated: [0-9]+ of $(stat -c %s "$WORK/big.sealed") bytes" "$(cat "$WORK/half.err")"
else
	ok "nothing of the stalled upload is stored"
fi

# --- TLS: the server's certificate is checked; caFile names the CA to trust
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
	-addext "subjectAltName=DNS:localhost,DNS:*.s3.localhost,IP:127.0.0.1" \
	-keyout "$WORK/tls.key" -out "$WORK/tls.pem" >/dev/null 2>&1
TLSPORT=$(free_port)
mkdir "$WORK/tlsbucket"
node "$NODE_DIR/s3rver/bin/s3rver.js" -d "$WORK/tlsbucket" -a 127.0.0.1 -p "$TLSPORT" \
	--service-endpoint localhost --configure-bucket snaps --silent \
	--key "$WORK/tls.key" --cert "$WORK/tls.pem" >"$WORK/s3rver-tls.log" 2>&1 &
TLSPID=$!
for _ in $(seq 1 100); do
	curl -s -o /dev/null --cacert "$WORK/tls.pem" "https://127.0.0.1:$TLSPORT/" && break
	sleep 0.1
done
tls_conf() { # ENDPOINT PATHSTYLE [CAFILE]
	printf '{"type":"s3","endpoint":"%s","bucket":"snaps","credentialsFile":"%s","pathStyle":%s%s}' \
		"$1" "$WORK/cred" "$2" "${3:+,\"caFile\":\"$3\"}"
}
"$T" put "$(tls_conf "https://127.0.0.1:$TLSPORT" true)" t/snap-1 "$WORK/snap2.sealed" \
	>/dev/null 2>"$WORK/tls.err"
expect_match "over https a certificate the system does not trust is refused, saying what to set" \
	"^s3: TLS with https://127.0.0.1:$TLSPORT failed: .*certificate.* \(caFile names a CA to trust\)$" \
	"$(cat "$WORK/tls.err")"
expect_eq "and nothing is stored" "" "$(find "$WORK/tlsbucket/snaps" -type f)"
check "with caFile naming its CA the upload goes through (path-style)" \
	"$T" put "$(tls_conf "https://127.0.0.1:$TLSPORT" true "$WORK/tls.pem")" t/snap-1 "$WORK/snap2.sealed"
check "and virtual-host, the name checked against the certificate" \
	"$T" get "$(tls_conf "https://s3.localhost:$TLSPORT" false "$WORK/tls.pem")" t/snap-1 "$WORK/tls.sealed"
check "the same bytes over TLS" cmp "$WORK/snap2.sealed" "$WORK/tls.sealed"
kill -TERM "$TLSPID"
wait "$TLSPID" 2>/dev/null
TLSPID=

expect_eq "the secret key reached no error, no output and no request s3rver logged" "" \
	"$(grep -l "$SECRET" "$WORK"/*.err "$WORK"/s3rver*.log)"
done_testing
