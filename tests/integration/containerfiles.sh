#!/bin/sh
# tests/integration/containerfiles.sh - the container image's and the Home Assistant add-on's
# files, checked without building them: hadolint-style rules by a small awk script (each
# rule also shown to catch a broken copy), the add-on manifest against its schema, and one
# image tag in the Containerfile, the Makefile, deploy/kubernetes and the add-on.
. "$top_srcdir/tests/integration/lib.sh"

CF="$top_srcdir/packaging/container/Containerfile"
HA="$top_srcdir/packaging/homeassistant"
ADDON="$HA/rezuscloud"

# lint FILE CONTEXT: print one line per broken rule, "FILE:LINE: rule". CONTEXT is the
# directory COPY sources are relative to. ALLOW_ROOT=1 skips the final stage's USER rule
# (the add-on starts as root and drops to rezus itself, see its run script).
lint() {
	[ -f "$1" ] || {
		echo "$1: missing"
		return
	}
	awk -v ctx="$2" -v allow_root="${ALLOW_ROOT:-0}" '
	function flush(   w, n, i, src, cmd, first, last) {
		if (cur == "") return
		n = split(cur, w, /[ \t]+/)
		cmd = toupper(w[1])
		if (cmd == "ARG" && stage == 0 && split(w[2], kv, "=") == 2) {
			# a global ARG: FROM may name it, and then means its default
			global[kv[1]] = kv[2]
		} else if (cmd == "FROM") {
			stage++; user = ""; health = 0
			img = w[2]
			for (i = 2; i <= n; i++) if (w[i] !~ /^--/) { img = w[i]; break }
			arg = img; gsub(/^\$\{?|\}$/, "", arg)
			if (img ~ /^\$/ && arg in global) img = global[arg]
			if (img in stages) { }
			else if (img ~ /^\$/) print FILENAME ":" start ": FROM " img " is not a pinned image"
			else if (img !~ /[:@]/) print FILENAME ":" start ": FROM " img " has no tag"
			else if (img ~ /:latest$/) print FILENAME ":" start ": FROM " img " is :latest"
			for (i = 3; i < n; i++) if (toupper(w[i]) == "AS") stages[w[i + 1]] = 1
		} else if (cmd == "USER") {
			user = w[2]
		} else if (cmd == "HEALTHCHECK") {
			health = 1
		} else if (cmd == "RUN") {
			if (cur ~ /apt-get( -[^ ]+)* install/) {
				if (cur !~ /--no-install-recommends/)
					print FILENAME ":" start ": apt-get install without --no-install-recommends"
				if (cur !~ /rm -rf \/var\/lib\/apt\/lists\/\*/)
					print FILENAME ":" start ": apt-get install without rm -rf /var/lib/apt/lists/* in the same RUN"
			}
			if (cur ~ /(curl|wget)[^&;|]*https?:\/\// && cur !~ /sha256sum (-c|--check)/)
				print FILENAME ":" start ": a download not verified with sha256sum -c"
			if (cur ~ /(curl|wget)[^&;|]* (-k|--insecure|--no-check-certificate)/)
				print FILENAME ":" start ": a download without certificate checks"
		} else if (cmd == "ADD") {
			for (i = 2; i <= n; i++) if (w[i] ~ /^https?:\/\//)
				print FILENAME ":" start ": ADD of a URL (download with a checksum in a RUN)"
		} else if (cmd == "COPY") {
			from = 0; first = 2
			for (i = 2; i <= n && w[i] ~ /^--/; i++) { if (w[i] ~ /^--from=/) from = 1; first = i + 1 }
			last = n - 1
			if (!from) for (i = first; i <= last; i++) {
				src = w[i]; gsub(/"|\[|\]|,/, "", src)
				if (src == "") continue
				if (system("test -e \"" ctx "/" src "\"") != 0)
					print FILENAME ":" start ": COPY source " src " is not in " ctx
			}
		}
		cur = ""
	}
	/^[ \t]*#/ && cur == "" { next }
	/^[ \t]*$/ { if (cur != "" && !cont) flush(); next }
	{
		line = $0
		if (cur == "") start = FNR
		cont = sub(/\\[ \t]*$/, "", line)
		if (line ~ /^[ \t]*#/) next
		cur = cur " " line
		sub(/^[ \t]+/, "", cur)
		if (!cont) flush()
	}
	END {
		flush()
		if (stage == 0) print FILENAME ": no FROM"
		if (!allow_root && (user == "" || user ~ /^(root|0)(:.*)?$/))
			print FILENAME ": the final stage runs as root (no USER, or USER root)"
		if (!health && !allow_root)
			print FILENAME ": the final stage has no HEALTHCHECK"
	}' "$1"
}

# caught DESCRIPTION SED-SCRIPT EXPECTED: a copy of the Containerfile edited by SED-SCRIPT
# must give a lint line with EXPECTED.
caught() {
	sed "$2" "$CF" >"$WORK/Containerfile"
	out=$(lint "$WORK/Containerfile" "$top_srcdir")
	if printf '%s\n' "$out" | grep -Fq -- "$3"; then
		ok "$1"
	else
		not_ok "$1" "expected a line with: $3" "got: $out"
	fi
}

# -------------------------------------------------------------- the Containerfile
out=$(lint "$CF" "$top_srcdir")
expect_eq "the Containerfile follows the rules" "" "$out"
if [ -f "$CF" ]; then
	caught "FROM without a tag is caught" 's/^FROM debian:12-slim AS runtime/FROM debian AS runtime/' \
		"FROM debian has no tag"
	caught "FROM :latest is caught" '0,/^FROM debian:12-slim/s//FROM debian:latest/' \
		"FROM debian:latest is :latest"
	caught "apt-get without --no-install-recommends is caught" 's/--no-install-recommends//' \
		"without --no-install-recommends"
	caught "apt lists kept in the layer are caught" 's|rm -rf /var/lib/apt/lists/\*|true|' \
		"without rm -rf /var/lib/apt/lists/*"
	caught "USER root in the final stage is caught" 's/^USER .*/USER root/' \
		"the final stage runs as root"
	caught "no HEALTHCHECK is caught" '/^HEALTHCHECK/,/readyz/d' "has no HEALTHCHECK"
	caught "an unverified download is caught" 's/sha256sum -c/true/' \
		"not verified with sha256sum -c"
	caught "ADD of a URL is caught" \
		'$a ADD https://example.invalid/tofu.zip /tmp/' "ADD of a URL"
	caught "a COPY source missing from the tree is caught" \
		'$a COPY no-such-file /tmp/' "COPY source no-such-file is not in"
	caught "a talosctl download not verified is caught" \
		's/echo "$sum  talosctl" | sha256sum -c -;/true;/' "not verified with sha256sum -c"
	caught "a kubectl download not verified is caught" \
		's/echo "$sum  kubectl" | sha256sum -c -;/true;/' "not verified with sha256sum -c"
	caught "FROM an ARG without a default is caught" \
		'1i ARG BASE\nFROM $BASE AS other' "FROM \$BASE is not a pinned image"
fi

# instructions FILE: one line per instruction (continuation lines joined, comments left
# out), "STAGE<tab>INSTRUCTION", STAGE the name of the stage it is in.
instructions() {
	awk '/^[ \t]*#/ { next }
	{
		line = $0; c = sub(/\\[ \t]*$/, "", line); cur = cur " " line
		if (c) next
		sub(/^[ \t]+/, "", cur); gsub(/[ \t]+/, " ", cur)
		if (cur != "") {
			if (cur ~ /^FROM /) { n = split(cur, w, " "); stage = w[n] }
			print stage "\t" cur
		}
		cur = ""
	}' "$1"
}

# clients FILE: the rules for talosctl and kubectl, one line per broken one: each downloaded
# from its upstream at a pinned version ARG, verified with sha256sum -c against a pinned sum
# per architecture, and copied into the final stage's /usr/local/bin (on PATH, where the
# talos.binary and kubectl.binary defaults, bare names, find them).
clients() {
	ins=$(instructions "$1")
	final=$(printf '%s\n' "$ins" | tail -n 1 | cut -f 1)
	for t in talosctl:TALOS_VERSION:TALOSCTL_SHA256 kubectl:KUBECTL_VERSION:KUBECTL_SHA256; do
		tool=${t%%:*} v=${t#*:} sums=${t##*:}
		v=${v%%:*}
		run=$(printf '%s\n' "$ins" | grep -E "	RUN .*(curl|wget) .*https://[^ ]*\\\$\\{$v\\}[^ ]*" | grep -- "$tool")
		stage=$(printf '%s\n' "$run" | head -n 1 | cut -f 1)
		if [ -z "$run" ]; then
			echo "$tool: no download at \${$v}"
			continue
		fi
		printf '%s\n' "$run" | grep -q "sha256sum -c" ||
			echo "$tool: its download is not checked with sha256sum -c"
		printf '%s\n' "$ins" | grep -Eq "^$stage	ARG $v=[0-9]+\\.[0-9]+\\.[0-9]+\$" ||
			echo "$tool: $v is not a pinned version in stage $stage"
		for a in AMD64 ARM64; do
			printf '%s\n' "$ins" | grep -Eq "^$stage	ARG ${sums}_$a=[0-9a-f]{64}\$" ||
				echo "$tool: ${sums}_$a is not a SHA-256 in stage $stage"
		done
		printf '%s\n' "$ins" | awk -F '\t' -v st="$final" -v from="$stage" -v tool="$tool" '
			$1 == st && index($2, "COPY --from=" from " ") == 1 {
				n = split($2, w, " ")
				for (i = 3; i < n; i++)
					if (w[i] ~ ("(^|/)" tool "$") && (w[n] == "/usr/local/bin/" || w[n] == "/usr/local/bin/" tool))
						found = 1
			}
			END { exit !found }' ||
			echo "$tool: not copied from stage $stage to /usr/local/bin in the final stage"
	done
}

out=$(clients "$CF")
expect_eq "talosctl and kubectl: pinned, verified, in the final stage's /usr/local/bin" "" "$out"
# caught_clients DESCRIPTION SED-SCRIPT EXPECTED: the same for a broken copy.
caught_clients() {
	sed "$2" "$CF" >"$WORK/Containerfile"
	out=$(clients "$WORK/Containerfile")
	if printf '%s\n' "$out" | grep -Fq -- "$3"; then
		ok "$1"
	else
		not_ok "$1" "expected a line with: $3" "got: $out"
	fi
}
caught_clients "a talosctl not copied into the final stage is caught" \
	's|^COPY --from=clients .*|COPY --from=clients /tmp/clients/kubectl /usr/local/bin/|' \
	"talosctl: not copied from stage clients"
caught_clients "a kubectl copied into another stage is caught" \
	's|^COPY --from=clients .*|COPY --from=clients /tmp/clients/talosctl /usr/local/bin/|' \
	"kubectl: not copied from stage clients"
caught_clients "a kubectl download without sha256sum -c is caught" \
	's/echo "$sum  kubectl" | sha256sum -c -;/true;/' "kubectl: its download is not checked"
caught_clients "a talosctl version not pinned is caught" \
	's/^ARG TALOS_VERSION=.*/ARG TALOS_VERSION=latest/' "talosctl: TALOS_VERSION is not a pinned version"
caught_clients "a kubectl arm64 sum left out is caught" \
	's/^ARG KUBECTL_SHA256_ARM64=.*/ARG KUBECTL_SHA256_ARM64=/' "kubectl: KUBECTL_SHA256_ARM64 is not a SHA-256"
caught_clients "a talosctl download not at its version ARG is caught" \
	's|download/v${TALOS_VERSION}/|download/v1.12.0/|' "talosctl: no download at"

cf=$(cat "$CF" 2>/dev/null)
from=$(grep -E '^FROM ' "$CF" 2>/dev/null | grep -v -- '--from' | awk '{print $2}' | sort -u)
expect_eq "every stage is on debian:12-slim" "debian:12-slim" "$from"
expect_match "the build stage runs autoreconf, configure for /usr, make and make install" \
	'autoreconf -fi && \./configure --prefix=/usr --sysconfdir=/etc --localstatedir=/var.*make -j"\$\(nproc\)".*make install DESTDIR=/out' \
	"$(printf '%s\n' "$cf" | tr -d '\\\n' | tr -s ' \t' ' ')"

# The build stage installs every -dev library tools/install-deps lists for the build
# (libclang-rt-dev is the sanitizer's, libsystemd-dev is for the systemd unit's sd_notify,
# dpkg-dev builds the Debian packages).
build=$(awk '/^FROM .* AS build/ {on = 1; next} /^FROM / {on = 0} on' "$CF" 2>/dev/null)
missing=""
for p in $(sed -n '/^PACKAGES="/,/^"/p' "$top_srcdir/tools/install-deps" | tr ' ' '\n' |
	grep -E -- '-dev$|^(autoconf|automake|libtool|pkg-config)$' |
	grep -v -e '^libclang-rt-dev$' -e '^libsystemd-dev$' -e '^dpkg-dev$'); do
	printf '%s\n' "$build" | grep -Eq -- "(^|[ 	])$p([ 	]|$)" || missing="$missing $p"
done
expect_eq "the build stage installs the build dependencies of tools/install-deps" "" "$missing"

runtime=$(awk '/^FROM .* AS runtime/ {on = 1; next} /^FROM / {on = 0} on' "$CF" 2>/dev/null)
expect_match "there is a runtime stage" 'USER' "$runtime"
dev=$(printf '%s\n' "$runtime" | grep -Eo -- '[a-z0-9.+-]+-dev([ 	]|$)|build-essential|autoconf' | tr -d ' \t' | sort -u | tr '\n' ' ')
expect_eq "the runtime stage installs no -dev package nor build tools" "" "$dev"
missing=""
for lib in libevent-2.1-7 libevent-openssl-2.1-7 libssl3 libsqlite3-0 libjansson4 libjwt0 \
	libsodium23 libyaml-0-2 libnettle8 zlib1g libhttp-parser2.9 libcurl4 libnats3.4 ca-certificates curl; do
	printf '%s\n' "$runtime" | grep -Eq -- "(^|[ 	])$lib([ 	]|$)" || missing="$missing $lib"
done
expect_eq "the runtime stage installs the libraries rezuscloud links and curl" "" "$missing"

expect_match "tofu's version is pinned" '^ARG TOFU_VERSION=1\.[0-9]+\.[0-9]+$' "$cf"
expect_match "tofu comes from OpenTofu's release" \
	'https://github\.com/opentofu/opentofu/releases/download/v\$\{TOFU_VERSION\}/tofu_\$\{TOFU_VERSION\}_linux_\$\{arch\}\.zip' "$cf"
expect_match "tofu's amd64 checksum is given" '^ARG TOFU_SHA256_AMD64=[0-9a-f]{64}$' "$cf"
expect_match "tofu's arm64 checksum is given" '^ARG TOFU_SHA256_ARM64=[0-9a-f]{64}$' "$cf"
expect_match "tofu goes to /usr/local/bin in the runtime stage" \
	'COPY --from=tofu [^ ]*tofu /usr/local/bin/tofu' "$runtime"
expect_match "the runtime stage takes the installed tree" 'COPY --from=build /out/ /' "$runtime"
expect_match "a fixed non-root uid and gid" 'groupadd .*--gid 10001 rezus' "$runtime"
expect_match "user rezus has uid 10001" 'useradd .*--uid 10001 .*rezus' "$runtime"
expect_match "the final stage runs as rezus" '^USER rezus$' "$runtime"
expect_match "the data volume" '^VOLUME \["?/var/lib/rezus"?\]$' "$runtime"
expect_match "port 8080 exposed" '^EXPOSE 8080$' "$runtime"
expect_match "the data dir in the environment" 'REZUSCLOUD_DATA_DIR=/var/lib/rezus' "$runtime"
expect_match "listening off loopback" 'REZUSCLOUD_SERVER_LISTEN=0\.0\.0\.0:8080' "$runtime"
expect_match "TLS with a self-signed certificate by default" \
	'REZUSCLOUD_SERVER_TLS_SELF_SIGNED=true' "$runtime"
expect_match "HEALTHCHECK asks /readyz over TLS, trusting the daemon's certificate" \
	'curl -fsS --cacert "\$REZUSCLOUD_DATA_DIR/tls-cert\.pem" https://127\.0\.0\.1:8080/readyz' \
	"$(printf '%s\n' "$runtime" | tr -d '\\\n')"
expect_match "the daemon is the entrypoint" '^ENTRYPOINT \["/usr/sbin/rezuscloud"\]$' "$runtime"
missing=""
for l in title description version revision source licenses url; do
	printf '%s\n' "$runtime" | grep -q "org\.opencontainers\.image\.$l=" || missing="$missing $l"
done
expect_eq "the OCI labels" "" "$missing"
expect_match "the licence is MIT" 'org\.opencontainers\.image\.licenses="MIT"' "$runtime"
# talosctl and kubectl are found on PATH (/usr/local/bin is on it) by the settings' defaults.
expect_eq "talos.binary and kubectl.binary default to names on PATH" "talosctl kubectl" \
	"$(for k in talos.binary kubectl.binary; do
		sed -n "/\.key = \"$k\"/,/\.def = /s/.*\.def = \"\([^\"]*\)\".*/\1/p" "$top_srcdir/core/base/settings.c"
	done | tr '\n' ' ' | sed 's/ $//')"

ign="$top_srcdir/.dockerignore"
expect_match ".dockerignore leaves out .git and build/" '^\.git$' "$(cat "$ign" 2>/dev/null)"
expect_match ".dockerignore leaves out build/" '^build$' "$(cat "$ign" 2>/dev/null)"

# -------------------------------------------------------------- one image tag
version=$(sed -n 's/^AC_INIT(\[rezuscloud\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")
repo=$(sed -n 's/^CONTAINER_IMAGE = \(.*\):\$(PACKAGE_VERSION)$/\1/p' "$top_srcdir/Makefile.am")
tag="$repo:$version"
expect_eq "Makefile.am names the image, tagged with the version" \
	"ghcr.io/rezuscloud/rezuscloud:$version" "$tag"
mk=$(cat "$top_srcdir/Makefile.am" "$top_srcdir/packaging/local.mk")
recipe=$(printf '%s\n' "$mk" | sed -n '/^container:/,/^$/p' | tr -d '\\\n' | tr -s ' \t' ' ')
expect_match "make container builds the Containerfile with that tag" \
	'\$\(CONTAINER_ENGINE\) build -t "\$\(CONTAINER_IMAGE\)" -f "\$\(srcdir\)/packaging/container/Containerfile" .* "\$\(srcdir\)"$' \
	"$recipe"
expect_match "  with podman, else docker" '^CONTAINER_ENGINE = .*podman.*docker' "$mk"
expect_eq "the Containerfile's default version is the package's" "$version" \
	"$(sed -n 's/^ARG VERSION=//p' "$CF" 2>/dev/null)"
expect_eq "deploy/kubernetes runs that image" "$tag" \
	"$(sed -n 's/^ *image: *//p' "$top_srcdir/deploy/kubernetes/rezuscloud.yaml")"
expect_match "rezusctl boot deploys that manifest" \
	'RZ_DATADIR "/deploy/kubernetes/rezuscloud.yaml"' "$(cat "$top_srcdir/cli/boot.c")"
expect_match "the manifest is installed where boot looks" \
	'dist_deploy_DATA = deploy/kubernetes/rezuscloud.yaml' "$(cat "$top_srcdir/cli/local.mk")"
# The image speaks TLS unless told: the manifest's plain HTTP probes need it said.
manifest=$top_srcdir/deploy/kubernetes/rezuscloud.yaml
expect_eq "the manifest keeps the image's TLS (no plain HTTP on the NodePort)" "" \
	"$(grep -E 'ALLOW_PLAIN_HTTP|TLS_SELF_SIGNED$' "$manifest")"
expect_match "its self-signed certificate names the node and the Service" \
	'name: REZUSCLOUD_SERVER_TLS_SELF_SIGNED_HOSTS value: "10\.5\.0\.2,rezuscloud\.rezus\.svc' \
	"$(grep -A1 'name: REZUSCLOUD_SERVER_TLS_SELF_SIGNED_HOSTS' "$manifest" | tr -s ' \n' ' ')"
expect_eq "the probes ask over HTTPS" "2" "$(grep -c 'scheme: HTTPS' "$manifest")"
expect_eq "the add-on is built on that image" "$tag" \
	"$(sed -n 's/^FROM //p' "$ADDON/Dockerfile" 2>/dev/null)"

# -------------------------------------------------------------- the Home Assistant add-on
if python3 -c 'import yaml' 2>/dev/null; then
	out=$(python3 - "$ADDON/config.yaml" "$HA/repository.yaml" "$version" 2>&1 <<'PY'
import sys, yaml

errors = []
try:
    with open(sys.argv[1]) as f:
        m = yaml.safe_load(f)
    with open(sys.argv[2]) as f:
        r = yaml.safe_load(f)
except (OSError, yaml.YAMLError) as e:
    print(e)
    sys.exit(1)

def want(key, kind, value=None):
    if key not in m:
        errors.append("no " + key)
    elif type(m[key]) is not kind:
        errors.append("%s is %s, not %s" % (key, type(m[key]).__name__, kind.__name__))
    elif value is not None and m[key] != value:
        errors.append("%s is %r, not %r" % (key, m[key], value))

for key in ("name", "slug", "description", "url", "panel_icon", "panel_title"):
    want(key, str)
want("version", str, sys.argv[3])
want("slug", str, "rezuscloud")
want("arch", list)
want("startup", str, "services")
want("boot", str, "auto")
want("ingress", bool, True)
want("ingress_port", int, 8080)
want("init", bool, False)
want("map", list)
want("options", dict)
want("schema", dict)
if not set(m.get("arch") or []) >= {"amd64", "aarch64"}:
    errors.append("arch lacks amd64 or aarch64")
if not str(m.get("panel_icon", "")).startswith("mdi:"):
    errors.append("panel_icon is not an mdi: icon")
types = [e.get("type") if isinstance(e, dict) else str(e).split(":")[0] for e in m.get("map") or []]
if "data" not in types:
    errors.append("map lacks data")
if "ports" in m:
    errors.append("ports: the API is reached through ingress only")
opts, schema = m.get("options") or {}, m.get("schema") or {}
if set(opts) != set(schema):
    errors.append("options and schema name different keys: %s" % sorted(set(opts) ^ set(schema)))
for key in ("log_level", "admin_password_file"):
    if key not in schema:
        errors.append("no option " + key)
levels = "debug|info|notice|warning|err|crit|alert|emerg"
if schema.get("log_level") != "list(%s)" % levels:
    errors.append("log_level's schema is not list(%s)" % levels)
if opts.get("log_level") not in levels.split("|"):
    errors.append("log_level's default is not a level")
if not isinstance(r, dict) or not isinstance(r.get("name"), str) or not isinstance(r.get("url"), str):
    errors.append("repository.yaml lacks name or url")
print("\n".join(errors))
PY
	)
	expect_eq "the add-on manifest has its keys, types and values" "" "$out"
else
	not_ok "the add-on manifest has its keys, types and values" "python3-yaml is missing (tools/install-deps)"
fi

missing=""
for f in DOCS.md README.md run.sh; do
	[ -s "$ADDON/$f" ] || missing="$missing $f"
done
expect_eq "the add-on has its DOCS.md, README.md and run script" "" "$missing"
out=$(ALLOW_ROOT=1 lint "$ADDON/Dockerfile" "$ADDON")
expect_eq "the add-on's Dockerfile follows the rules" "" "$out"
check "the run script is POSIX sh" sh -n "$ADDON/run.sh"
run=$(cat "$ADDON/run.sh" 2>/dev/null)
expect_match "the run script reads /data/options.json with jq" 'options=\$\{REZUS_ADDON_OPTIONS:-/data/options\.json\}' "$run"
expect_match "  with jq" 'jq -r ' "$run"
expect_match "the ingress proxy is the trusted proxy" 'REZUSCLOUD_SERVER_TRUSTED_PROXIES=172\.30\.32\.2$' "$run"
expect_match "data in /data" '--data-dir /data' "$run"
expect_match "it drops to rezus before the daemon starts" \
	'exec setpriv --reuid=rezus --regid=rezus --init-groups .*/usr/sbin/rezuscloud' \
	"$(tr -d '\\\n' <"$ADDON/run.sh" 2>/dev/null)"
expect_match "the add-on's HEALTHCHECK asks /readyz over its plain HTTP" \
	'HEALTHCHECK .*http://127\.0\.0\.1:8080/readyz' "$(tr -d '\\\n' <"$ADDON/Dockerfile" 2>/dev/null)"

# The run script, run against a stand-in setpriv: the options turn into the daemon's
# arguments and environment; a bad level is refused before anything starts.
mkdir -p "$WORK/bin"
cat >"$WORK/bin/setpriv" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do case $1 in --*) shift ;; *) break ;; esac; done
[ "$1" = test ] && exec "$@"
echo "argv: $*"
env | grep '^REZUSCLOUD_' | sort
EOF
printf '#!/bin/sh\nexit 0\n' >"$WORK/bin/chown"
chmod +x "$WORK/bin/setpriv" "$WORK/bin/chown"
if [ -f "$ADDON/run.sh" ]; then
	printf 'secret\n' >"$WORK/pw"
	printf '{"log_level": "debug", "admin_password_file": "%s"}\n' "$WORK/pw" >"$WORK/options.json"
	out=$(PATH="$WORK/bin:$PATH" REZUS_ADDON_OPTIONS="$WORK/options.json" sh "$ADDON/run.sh" 2>&1)
	expect_match "options become the daemon's arguments" \
		'^argv: /usr/sbin/rezuscloud --log-level debug --listen 0\.0\.0\.0:8080 --data-dir /data$' "$out"
	expect_match "the password file is handed on" \
		"^REZUSCLOUD_AUTH_ADMIN_PASSWORD_FILE=$WORK/pw\$" "$out"
	expect_match "plain HTTP for the ingress proxy" \
		'^REZUSCLOUD_SERVER_TLS_ALLOW_PLAIN_HTTP=true$' "$out"
	printf '{"log_level": "loud", "admin_password_file": ""}\n' >"$WORK/options.json"
	out=$(PATH="$WORK/bin:$PATH" REZUS_ADDON_OPTIONS="$WORK/options.json" sh "$ADDON/run.sh" 2>&1)
	rc=$?
	expect_match "a bad log_level is refused" 'log_level "loud"' "$out rc=$rc"
	expect_eq "  and the daemon is not started" "" "$(printf '%s\n' "$out" | grep '^argv:')"
else
	not_ok "the run script exists" "$ADDON/run.sh"
fi

done_testing
