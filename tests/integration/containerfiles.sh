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
expect_eq "the add-on's Dockerfile builds on that image by default" "$tag" \
	"$(sed -n 's/^ARG BUILD_FROM=//p' "$ADDON/Dockerfile" 2>/dev/null)"
expect_match "  FROM the BUILD_FROM the Supervisor passes" '^FROM \$\{?BUILD_FROM\}?$' "$(cat "$ADDON/Dockerfile" 2>/dev/null)"

# -------------------------------------------------------------- the Home Assistant add-on
# addon_check REPO VERSION TAG: the add-on repository REPO against the rules the
# Supervisor applies (supervisor/apps/validate.py, options.py, build.py, store/): one line
# per broken rule.
addon_check() {
	python3 - "$1" "$2" "$3" <<'PY'
import glob, os, re, struct, sys, yaml

repo, version, tag = sys.argv[1:4]
addon = os.path.join(repo, "rezuscloud")
errors = []

def load(name, where=addon):
    try:
        with open(os.path.join(where, name)) as f:
            return yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        errors.append("%s: %s" % (name, str(e).splitlines()[0]))
        return None

# The repository: repository.yaml at its root (name required, url a URL), and each
# add-on a directory with a config.* (the Supervisor globs **/config.*).
r = load("repository.yaml", repo)
if not isinstance(r, dict) or not isinstance(r.get("name"), str):
    errors.append("repository.yaml: no name")
elif "url" in r and not re.match(r"^https?://[^/ ]+", str(r["url"])):
    errors.append("repository.yaml: url is not a URL")
found = sorted(os.path.relpath(os.path.dirname(p), repo) for p in glob.glob(os.path.join(repo, "**/config.*"), recursive=True))
if found != ["rezuscloud"]:
    errors.append("the add-ons found are %s, not [rezuscloud]" % found)
for f in ("config.yaml", "build.yaml", "Dockerfile", "DOCS.md", "README.md", "CHANGELOG.md",
          "icon.png", "logo.png", "translations/en.yaml", "run.sh"):
    p = os.path.join(addon, f)
    if not os.path.isfile(p) or os.path.getsize(p) == 0:
        errors.append("missing " + f)

m = load("config.yaml")
if not isinstance(m, dict):
    print("\n".join(errors + ["config.yaml is not a mapping"]))
    sys.exit(0)

def want(key, kind, value=None, required=True):
    if key not in m:
        if required:
            errors.append("no " + key)
    elif type(m[key]) is not kind:
        errors.append("%s is %s, not %s" % (key, type(m[key]).__name__, kind.__name__))
    elif value is not None and m[key] != value:
        errors.append("%s is %r, not %r" % (key, m[key], value))

# vol.Required in _SCHEMA_APP_CONFIG, then the optional keys this add-on sets.
for key in ("name", "description"):
    want(key, str)
want("version", str, version)
want("slug", str, "rezuscloud")
if not re.fullmatch(r"[-_.A-Za-z0-9]+", str(m.get("slug", ""))):
    errors.append("slug is not [-_.A-Za-z0-9]+")
want("arch", list)
arch = m.get("arch") if isinstance(m.get("arch"), list) else []
for a in arch:
    if a not in ("aarch64", "amd64", "armhf", "armv7", "i386"):
        errors.append("arch %r is not an architecture" % a)
    elif a not in ("aarch64", "amd64"):
        errors.append("arch %r is deprecated" % a)
if set(arch) != {"amd64", "aarch64"}:
    errors.append("arch is not amd64 and aarch64 (what the image is built for)")
want("url", str)
if not re.match(r"^https?://", str(m.get("url", ""))):
    errors.append("url is not a URL")
want("startup", str, "services")
want("boot", str, "auto")
want("ingress", bool, True)
want("ingress_port", int, 8080)
want("init", bool, False)
want("panel_icon", str)
want("panel_title", str)
if not str(m.get("panel_icon", "")).startswith("mdi:"):
    errors.append("panel_icon is not an mdi: icon")
want("map", list)
kinds = ("data", "config", "ssl", "local_apps", "backup", "share", "media", "homeassistant_config",
         "all_app_configs", "app_config", "addons", "all_addon_configs", "addon_config")
types = []
for e in m.get("map") or []:
    if not isinstance(e, dict) or e.get("type") not in kinds:
        errors.append("map entry %r is not {type: one of %s}" % (e, "|".join(kinds)))
    else:
        types.append(e["type"])
        if not isinstance(e.get("read_only", True), bool):
            errors.append("map %s: read_only is not a boolean" % e["type"])
if "data" not in types:
    errors.append("map lacks data")
if "ports" in m:
    errors.append("ports: the API is reached through ingress only")

# Options and their schema (options.py): the same keys; each type one the Supervisor
# knows; each default valid for its type; every secret a password.
ELEMENT = re.compile(r"^(?:|bool|email|url|port|device(?:\((?P<filter>subsystem=[a-z]+)\))?"
    r"|str(?:\((?P<s_min>\d+)?,(?P<s_max>\d+)?\))?|password(?:\((?P<p_min>\d+)?,(?P<p_max>\d+)?\))?"
    r"|int(?:\((?P<i_min>-?\d+)?,(?P<i_max>-?\d+)?\))?"
    r"|float(?:\((?P<f_min>-?\d*\.?\d+)?,(?P<f_max>-?\d*\.?\d+)?\))?"
    r"|match\((?P<match>.*)\)|list\((?P<list>.+)\))\??$")

def valid(key, typ, value):
    if isinstance(typ, list):
        if len(typ) != 1 or not isinstance(value, list):
            return "%s: a list schema takes one element and a list value" % key
        for v in value:
            e = valid(key, typ[0], v)
            if e:
                return e
        return None
    if not isinstance(typ, str):
        return "%s: schema %r is not a type" % (key, typ)
    g = ELEMENT.match(typ)
    if not g:
        return "%s: %r is not a schema type" % (key, typ)
    if value is None:
        return None if typ.endswith("?") else "%s: no default for a required option" % key
    base = re.match(r"[a-z]+", typ).group(0)
    lo = {k[2:]: float(v) for k, v in g.groupdict().items() if v and k[1] == "_" and k[2:] == "min"}
    hi = {k[2:]: float(v) for k, v in g.groupdict().items() if v and k[1] == "_" and k[2:] == "max"}
    if base in ("str", "password"):
        if not isinstance(value, str):
            return "%s: default %r is not a string" % (key, value)
        if len(value) < lo.get("min", 0) or len(value) > hi.get("max", float("inf")):
            return "%s: default %r is out of its length" % (key, value)
    elif base in ("int", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "%s: default %r is not a number" % (key, value)
        if value < lo.get("min", float("-inf")) or value > hi.get("max", float("inf")):
            return "%s: default %r is out of range" % (key, value)
    elif base == "bool":
        if not isinstance(value, bool):
            return "%s: default %r is not a boolean" % (key, value)
    elif base == "list":
        if str(value) not in g.group("list").split("|"):
            return "%s: default %r is not one of %s" % (key, value, g.group("list"))
    elif base == "match":
        if not re.match(g.group("match"), str(value)):
            return "%s: default %r does not match %s" % (key, value, g.group("match"))
    elif base == "url":
        if not re.match(r"^https?://", str(value)):
            return "%s: default %r is not a URL" % (key, value)
    return None

want("options", dict)
want("schema", dict)
opts = m.get("options") if isinstance(m.get("options"), dict) else {}
schema = m.get("schema") if isinstance(m.get("schema"), dict) else {}
for key in sorted(set(opts) - set(schema)):
    errors.append("option %s has no schema entry" % key)
for key in sorted(set(schema) - set(opts)):
    errors.append("schema %s has no option" % key)
for key in sorted(set(opts) & set(schema)):
    e = valid(key, schema[key], opts[key])
    if e:
        errors.append(e)
    base = schema[key][0] if isinstance(schema[key], list) else schema[key]
    if re.search(r"(private_key|secret|passphrase|password)(?!_file)", key) and not str(base).startswith("password"):
        errors.append("%s is a secret but its schema is %r, not password" % (key, base))
for key in ("log_level", "admin_password_file", "plugins", "backup_target"):
    if key not in schema:
        errors.append("no option " + key)
levels = "debug|info|notice|warning|err|crit|alert|emerg"
if schema.get("log_level") != "list(%s)" % levels:
    errors.append("log_level's schema is not list(%s)" % levels)
if schema.get("plugins") != ["list(talos|metal|oci|openstack|sim)"]:
    errors.append("plugins' schema is not a list of the in-tree plugins")

# build.yaml (SCHEMA_BUILD_CONFIG): build_from an image, or one per architecture;
# every architecture of config.yaml has one, and it is the image the build makes.
b = load("build.yaml")
image = re.compile(r"^([a-zA-Z\-\.:\d{}]+/)*?([\-\w{}]+)/([\-\w{}]+)(:[\.\-\w{}]+)?$")
if isinstance(b, dict):
    bf = b.get("build_from")
    if isinstance(bf, str):
        bf = {a: bf for a in arch}
    if not isinstance(bf, dict):
        errors.append("build.yaml: no build_from")
        bf = {}
    for a, ref in bf.items():
        if a not in ("aarch64", "amd64", "armhf", "armv7", "i386"):
            errors.append("build.yaml: build_from names %r, not an architecture" % a)
        if not isinstance(ref, str) or not image.match(ref):
            errors.append("build.yaml: build_from %s is not an image" % a)
        elif ref != tag:
            errors.append("build.yaml: build_from %s is %s, not %s" % (a, ref, tag))
    for a in arch:
        if a not in bf:
            errors.append("build.yaml: no build_from for " + a)
    for k in ("args", "labels"):
        if k in b and not (isinstance(b[k], dict) and all(isinstance(v, str) for v in b[k].values())):
            errors.append("build.yaml: %s is not a mapping of strings" % k)
elif b is not None:
    errors.append("build.yaml is not a mapping")

# translations/en.yaml (SCHEMA_APP_TRANSLATIONS): a name and a description per option.
t = load("translations/en.yaml")
conf = t.get("configuration") if isinstance(t, dict) else None
if not isinstance(conf, dict):
    errors.append("translations/en.yaml: no configuration")
    conf = {}
for key in opts:
    e = conf.get(key)
    if not isinstance(e, dict) or not isinstance(e.get("name"), str) or not isinstance(e.get("description"), str):
        errors.append("translations/en.yaml: %s has no name and description" % key)
for key in sorted(set(conf) - set(opts)):
    errors.append("translations/en.yaml: %s is not an option" % key)

# The pictures: PNGs (signature, IHDR first) of the sizes the store shows.
for f, size in (("icon.png", (128, 128)), ("logo.png", (250, 100))):
    try:
        with open(os.path.join(addon, f), "rb") as fh:
            head = fh.read(24)
    except OSError:
        continue
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        errors.append("%s is not a PNG" % f)
    elif struct.unpack(">II", head[16:24]) != size:
        errors.append("%s is %dx%d, not %dx%d" % ((f,) + struct.unpack(">II", head[16:24]) + size))
print("\n".join(errors))
PY
}

if python3 -c 'import yaml' 2>/dev/null; then
	out=$(addon_check "$HA" "$version" "$tag" 2>&1)
	expect_eq "the add-on repository passes the Supervisor's rules" "" "$out"
	# caught_addon DESCRIPTION FILE PYTHON-EXPRESSION EXPECTED: a copy of the repository with
	# FILE (under rezuscloud/) rewritten by s = EXPRESSION must give a line with EXPECTED.
	caught_addon() {
		rm -rf "$WORK/ha" && cp -R "$HA" "$WORK/ha"
		python3 -c 'import sys; p = sys.argv[1]; s = open(p, "rb").read().decode("latin-1"); s = eval(sys.argv[2]); open(p, "wb").write(s.encode("latin-1"))' \
			"$WORK/ha/rezuscloud/$2" "$3"
		out=$(addon_check "$WORK/ha" "$version" "$tag" 2>&1)
		if printf '%s\n' "$out" | grep -Fq -- "$4"; then
			ok "$1"
		else
			not_ok "$1" "expected a line with: $4" "got: $out"
		fi
	}
	caught_addon "an option without a schema entry is caught" config.yaml \
		's.replace("  s3_bucket: str?\n", "")' "option s3_bucket has no schema entry"
	caught_addon "a schema entry without an option is caught" config.yaml \
		's.replace("  s3_bucket: \"\"\n", "")' "schema s3_bucket has no option"
	caught_addon "an unknown schema type is caught" config.yaml \
		's.replace("backup_keep: int(1,1000)", "backup_keep: integer")' "is not a schema type"
	caught_addon "a default outside its type is caught" config.yaml \
		's.replace("backup_keep: 7", "backup_keep: 0")' "backup_keep: default 0 is out of range"
	caught_addon "a secret that is not a password is caught" config.yaml \
		's.replace("s3_secret_access_key: password?", "s3_secret_access_key: str?")' \
		"s3_secret_access_key is a secret but its schema is 'str?', not password"
	caught_addon "a version other than configure.ac's is caught" config.yaml \
		's.replace("version: \"%s\"" % "'"$version"'", "version: \"9.9.9\"")' "version is '9.9.9'"
	caught_addon "a deprecated architecture is caught" config.yaml \
		's.replace("  - aarch64\n", "  - aarch64\n  - armv7\n")' "arch 'armv7' is deprecated"
	caught_addon "a missing required key is caught" config.yaml \
		'"\n".join(l for l in s.split("\n") if not l.startswith("description:"))' "no description"
	caught_addon "an architecture without a base image is caught" build.yaml \
		's.replace("  aarch64: ", "  armhf: ")' "build.yaml: no build_from for aarch64"
	caught_addon "a base image the build does not make is caught" build.yaml \
		's.replace("amd64: ghcr.io/rezuscloud/rezuscloud:", "amd64: ghcr.io/elsewhere/rezuscloud:")' \
		"build.yaml: build_from amd64 is ghcr.io/elsewhere/rezuscloud"
	caught_addon "an option without a translation is caught" translations/en.yaml \
		's.replace("  s3_region:\n", "  s3_regio:\n")' "translations/en.yaml: s3_region has no name and description"
	caught_addon "an icon of the wrong size is caught" icon.png \
		'open("'"$HA"'/rezuscloud/logo.png", "rb").read().decode("latin-1")' "icon.png is 250x100, not 128x128"
	caught_addon "a logo that is not a PNG is caught" logo.png '"GIF89a" + s[6:]' "logo.png is not a PNG"
	caught_addon "a missing CHANGELOG.md is caught" CHANGELOG.md '""' "missing CHANGELOG.md"
else
	not_ok "the add-on repository passes the Supervisor's rules" "python3-yaml is missing (tools/install-deps)"
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

# The run script, run against a stand-in setpriv that prints the daemon's arguments and
# REZUSCLOUD_* settings, and keeps its REZUSCLOUD_*, OCI_* and OS_* environment in a file:
# the options turn into settings, files and the providers' variables; the secrets reach
# their files, readable by their owner only, and never the output nor the environment.
mkdir -p "$WORK/bin"
cat >"$WORK/bin/setpriv" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do case $1 in --*) shift ;; *) break ;; esac; done
[ "$1" = test ] && exec "$@"
echo "argv: $*"
env | grep -E '^(REZUSCLOUD|OCI|OS)_' | sort >"$REZUS_STUB_ENV"
env | grep '^REZUSCLOUD_' | sort
EOF
printf '#!/bin/sh\nexit 0\n' >"$WORK/bin/chown"
chmod +x "$WORK/bin/setpriv" "$WORK/bin/chown"
# addon_run [RUN-SCRIPT]: run.sh (or a copy) on $WORK/options.json; its output.
addon_run() {
	rm -f "$WORK/env"
	PATH="$WORK/bin:$PATH" REZUS_STUB_ENV="$WORK/env" REZUS_ADDON_OPTIONS="$WORK/options.json" \
		REZUS_ADDON_RUN_DIR="$WORK/run" sh "${1:-$ADDON/run.sh}" 2>&1
}
if [ -f "$ADDON/run.sh" ]; then
	printf 'secret\n' >"$WORK/pw"
	printf '{"log_level": "debug", "admin_password_file": "%s"}\n' "$WORK/pw" >"$WORK/options.json"
	out=$(addon_run)
	expect_match "options become the daemon's arguments" \
		"^argv: /usr/sbin/rezuscloud -c $WORK/run/rezus.conf --log-level debug --listen 0\\.0\\.0\\.0:8080 --data-dir /data\$" "$out"
	expect_match "the password file is handed on" \
		"^REZUSCLOUD_AUTH_ADMIN_PASSWORD_FILE=$WORK/pw\$" "$out"
	expect_match "plain HTTP for the ingress proxy" \
		'^REZUSCLOUD_SERVER_TLS_ALLOW_PLAIN_HTTP=true$' "$out"
	expect_eq "without plugins, talos alone" "plugins:|  talos: {}|" \
		"$(grep -v '^#' "$WORK/run/rezus.conf" 2>/dev/null | tr '\n' '|')"
	expect_match "backups on a schedule in /data/backups" '^REZUSCLOUD_BACKUP_DIR=/data/backups$' "$out"
	expect_eq "  every 24h, 7 kept, no target" "REZUSCLOUD_BACKUP_INTERVAL=24h REZUSCLOUD_BACKUP_KEEP=7 " \
		"$(printf '%s\n' "$out" | grep -E '^REZUSCLOUD_BACKUP_(INTERVAL|KEEP|TARGET)=' | tr '\n' ' ')"

	# Every option, the secrets marked so that a leak is seen.
	python3 - "$WORK/options.json" <<'PY'
import json, sys
body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKjOCIKEYSECRET" * 3
json.dump({"log_level": "info", "admin_password_file": "", "plugins": ["talos", "oci", "openstack"],
    "oci_tenancy_ocid": "ocid1.tenancy.oc1..aaaa", "oci_user_ocid": "ocid1.user.oc1..bbbb",
    "oci_fingerprint": "12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0",
    # pasted into the one-line field: the line breaks are gone
    "oci_private_key": "-----BEGIN PRIVATE KEY-----" + body + "-----END PRIVATE KEY-----",
    "oci_region": "eu-frankfurt-1",
    "openstack_auth_url": "https://keystone.example.com:5000/v3", "openstack_region": "RegionOne",
    "openstack_application_credential_id": "4f1d2c",
    "openstack_application_credential_secret": "OSAPPCREDSECRET",
    "backup_target": "s3", "backup_interval": "12h", "backup_keep": 5,
    "backup_passphrase": "BACKUPPASSSECRET",
    "s3_endpoint": "https://s3.example.com", "s3_bucket": "snaps", "s3_prefix": "rezus/",
    "s3_region": "eu-1", "s3_path_style": True, "s3_access_key_id": "AKIAEXAMPLE",
    "s3_secret_access_key": "S3SECRETACCESSKEY"}, open(sys.argv[1], "w"))
PY
	secrets='OCIKEYSECRET|OSAPPCREDSECRET|BACKUPPASSSECRET|S3SECRETACCESSKEY'
	out=$(addon_run)
	rc=$?
	expect_eq "every option set: the daemon starts" "0 1" "$rc $(printf '%s\n' "$out" | grep -c '^argv:')"
	expect_eq "no secret in the run script's output" "" "$(printf '%s\n' "$out" | grep -E "$secrets")"
	expect_eq "  nor in the daemon's environment" "" "$(grep -E "$secrets" "$WORK/env" 2>/dev/null)"
	expect_eq "the plugins chosen are loaded, oci with its region" \
		'plugins:|  talos: {}|  oci:|    region: "eu-frankfurt-1"|  openstack: {}|' \
		"$(grep -v '^#' "$WORK/run/rezus.conf" 2>/dev/null | tr '\n' '|')"
	env=$(cat "$WORK/env" 2>/dev/null)
	expect_match "OCI's provider gets the key's file" "^OCI_PRIVATE_KEY_PATH=$WORK/run/oci_api_key.pem\$" "$env"
	expect_match "  and the key's owner" '^OCI_USER_OCID=ocid1\.user\.oc1\.\.bbbb$' "$env"
	key="$WORK/run/oci_api_key.pem"
	expect_eq "the key's line breaks are put back (PEM: 64 columns)" \
		"-----BEGIN PRIVATE KEY----- 64 64 64 -----END PRIVATE KEY-----" \
		"$(awk 'NR == 1 || /^-----END/ { printf "%s ", $0; next } { printf "%d ", length($0) }' "$key" 2>/dev/null | sed 's/ [0-9]* -----END/ -----END/; s/ $//')"
	expect_eq "  the key whole" "$(jq -r .oci_private_key "$WORK/options.json" | sed 's/-----[A-Z ]*-----//g')" \
		"$(grep -v -- '-----' "$key" 2>/dev/null | tr -d '\n')"
	expect_match "OpenStack's provider gets a clouds.yaml" \
		"^OS_CLIENT_CONFIG_FILE=$WORK/run/clouds.yaml\$" "$env"
	expect_eq "  with the application credential, as cloud rezus" \
		"rezus v3applicationcredential https://keystone.example.com:5000/v3 4f1d2c OSAPPCREDSECRET RegionOne" \
		"$(grep '^OS_CLOUD=' "$WORK/env" | cut -d= -f2) $(jq -r '.clouds.rezus | [.auth_type, .auth.auth_url, .auth.application_credential_id, .auth.application_credential_secret, .region_name] | join(" ")' "$WORK/run/clouds.yaml" 2>&1)"
	expect_eq "the passphrase's file holds it" "BACKUPPASSSECRET" "$(cat "$WORK/run/backup.passphrase" 2>/dev/null)"
	expect_match "  and is the backups' passphrase_file" \
		"^REZUSCLOUD_BACKUP_PASSPHRASE_FILE=$WORK/run/backup.passphrase\$" "$env"
	expect_eq "the S3 credentials file, AWS style" \
		"[default]|aws_access_key_id = AKIAEXAMPLE|aws_secret_access_key = S3SECRETACCESSKEY|" \
		"$(tr '\n' '|' <"$WORK/run/s3.credentials" 2>/dev/null)"
	expect_eq "backups and etcd snapshots to s3" \
		"REZUSCLOUD_BACKUP_INTERVAL=12h REZUSCLOUD_BACKUP_KEEP=5 REZUSCLOUD_BACKUP_TARGET=s3 REZUSCLOUD_ETCD_BACKUP_S3_BUCKET=snaps REZUSCLOUD_ETCD_BACKUP_S3_CREDENTIALS_FILE=$WORK/run/s3.credentials REZUSCLOUD_ETCD_BACKUP_S3_ENDPOINT=https://s3.example.com REZUSCLOUD_ETCD_BACKUP_S3_PATH_STYLE=true REZUSCLOUD_ETCD_BACKUP_S3_PREFIX=rezus/ REZUSCLOUD_ETCD_BACKUP_S3_REGION=eu-1 REZUSCLOUD_ETCD_BACKUP_TARGET=s3 " \
		"$(grep -E '^REZUSCLOUD_(BACKUP_(INTERVAL|KEEP|TARGET)|ETCD_BACKUP_)' "$WORK/env" | tr '\n' ' ')"
	expect_eq "the files the secrets are in are their owner's alone" "600 600 600 600 700" \
		"$(for f in oci_api_key.pem clouds.yaml backup.passphrase s3.credentials; do stat -c %a "$WORK/run/$f"; done 2>&1 | tr '\n' ' ')$(stat -c %a "$WORK/run")"
	# The secret check can fail: a copy that prints one is caught.
	sed 's|^exec setpriv|jq -r .s3_secret_access_key "$options"; exec setpriv|' "$ADDON/run.sh" >"$WORK/leaky.sh"
	expect_match "  (a run script printing a secret is caught)" "$secrets" "$(addon_run "$WORK/leaky.sh")"

	# The real daemon takes what the run script made (--check-config loads the plugins).
	if [ -x "$top_builddir/rezuscloud" ] && [ -d "$top_builddir/plugins/.libs" ]; then
		mkdir -p "$WORK/data"
		out=$(addon_run && grep -v -e '^REZUSCLOUD_DATA_DIR=' -e '^REZUSCLOUD_BACKUP_DIR=' "$WORK/env" >"$WORK/env.check" &&
			(set -a && . "$WORK/env.check" && REZUSCLOUD_PLUGIN_DIR="$top_builddir/plugins/.libs" &&
				exec "$top_builddir/rezuscloud" --check-config \
				-c "$WORK/run/rezus.conf" --data-dir "$WORK/data") 2>&1)
		rc=$?
		expect_eq "rezuscloud --check-config takes the settings the run script made" "0" "$rc"
		expect_match "  and loads the plugins chosen" 'plugin checked.* plugin=openstack' "$out"
	else
		not_ok "rezuscloud --check-config takes the settings the run script made" "no $top_builddir/rezuscloud"
	fi

	# Refusals name the option, start nothing and print no secret.
	refused() {
		python3 -c 'import json, sys; o = json.load(open(sys.argv[1])); o.update(json.loads(sys.argv[2])); json.dump(o, open(sys.argv[1], "w"))' \
			"$WORK/options.json" "$2"
		out=$(addon_run)
		rc=$?
		expect_match "$1" "$3" "$out"
		expect_eq "  exit 2, the daemon not started, no secret shown" "2  " \
			"$rc $(printf '%s\n' "$out" | grep '^argv:') $(printf '%s\n' "$out" | grep -E "$secrets")"
	}
	refused "a plugin that does not exist is refused" '{"plugins": ["talos", "aws"]}' 'plugins: "aws" is not one of'
	refused "oci without its key is refused" '{"plugins": ["oci"], "oci_private_key": ""}' 'the oci plugin needs oci_private_key'
	refused "a key that is not PEM is refused" '{"oci_private_key": "OCIKEYSECRET"}' 'oci_private_key is not a PEM private key'
	refused "s3 without a bucket is refused" '{"plugins": ["talos"], "s3_bucket": ""}' 'backup_target s3 needs s3_bucket'
	refused "a short passphrase is refused" '{"s3_bucket": "snaps", "backup_passphrase": "SECRET"}' 'backup_passphrase must be 8 to 1024 characters'
	refused "a bad log_level is refused" '{"backup_passphrase": "", "log_level": "loud"}' 'log_level "loud"'
else
	not_ok "the run script exists" "$ADDON/run.sh"
fi

done_testing
