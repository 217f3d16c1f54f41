#!/bin/sh
# The packages as an operator and a plugin vendor get them (SPEC §12): the release tree
# (make distdir) built into Debian packages with dpkg-buildpackage and checked with lintian,
# then extracted (nothing is installed on the machine): the file lists, the extracted
# daemon and client run, the SDK example built against the extracted -dev package with
# -Werror and loaded by the extracted checker and daemon, the daemon's readiness
# notification, the unit through systemd-analyze; then the RPMs from the same tarball with
# rpmbuild. One build of each, with -j2: this is the slow test (a few minutes).
. "${top_srcdir:-.}/tests/integration/lib.sh"

if [ "${PACKAGING_TEST:-}" = no ]; then
	echo "1..0 # SKIP PACKAGING_TEST=no: the packages are built and checked in another suite"
	exit 0
fi
for tool in dpkg-buildpackage dh lintian rpmbuild systemd-analyze python3; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		if [ -f "${NODE_TREE:-$top_srcdir/build/node}/.installed" ]; then # tools/install-deps ran
			not_ok "$tool is installed (tools/install-deps installs it)"
			done_testing
			exit 1
		fi
		echo "1..0 # SKIP $tool is not installed (tools/install-deps installs it)"
		exit 0
	fi
done

VERSION=$(sed -n 's/^PACKAGE_VERSION = //p' "$top_builddir/Makefile")
ABI=$(sed -n 's/^#define REZUS_ABI_MAJOR \([0-9]*\)$/\1/p' "$top_srcdir/sdk/include/rezus/version.h")
TRIPLET=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
SRC="$WORK/src/rezuscloud-$VERSION"

# --- the release tree and the Debian packages ------------------------------------------------------
mkdir -p "$WORK/src"
check "make distdir writes the release tree" make -C "$top_builddir" distdir distdir="$SRC"
tar -C "$WORK/src" -czf "$WORK/rezuscloud-$VERSION.tar.gz" "rezuscloud-$VERSION"
# Every document and page of the source is in the release tree (a new one left out of the
# dist lists would otherwise pass every other check).
expect_eq "the release tree has every document of docs/ and every man page" \
	"$(cd "$top_srcdir" && ls docs/*.md man/*.[0-9] | sort | tr '\n' ' ')" \
	"$(cd "$SRC" && ls docs/*.md man/*.[0-9] | sort | tr '\n' ' ')"
cp -r "$SRC/packaging/debian" "$SRC/debian"
start=$(date +%s)
if (cd "$SRC" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) \
	>"$WORK/deb.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b builds from the release tree"
else
	not_ok "dpkg-buildpackage -us -uc -b builds from the release tree" "$(tail -n 30 "$WORK/deb.log")"
fi
echo "# the Debian build took $(($(date +%s) - start)) s"
ARCH=$(dpkg-architecture -qDEB_HOST_ARCH)
DEB_D="$WORK/src/rezuscloud_${VERSION}-1_$ARCH.deb"
DEB_C="$WORK/src/rezusctl_${VERSION}-1_$ARCH.deb"
DEB_DEV="$WORK/src/rezuscloud-plugin-dev_${VERSION}-1_$ARCH.deb"
expect_eq "three packages: rezuscloud, rezusctl, rezuscloud-plugin-dev" "yes yes yes" \
	"$(for d in "$DEB_D" "$DEB_C" "$DEB_DEV"; do [ -f "$d" ] && echo yes || echo no; done | tr '\n' ' ' | sed 's/ $//')"

CHANGES="$WORK/src/rezuscloud_${VERSION}-1_$ARCH.changes"
# one run with the informational tags and the overrides (with these options lintian 2.116
# exits 2 here whatever it finds): the errors are read from what it says
lintian --display-info --show-overrides "$CHANGES" >"$WORK/lintian.out" 2>&1
sed 's/^/# lintian: /' "$WORK/lintian.out"
expect_eq "lintian reports no error" "" "$(grep '^E:' "$WORK/lintian.out")"
expect_match "and it ran (its tags are there)" '^W: rezuscloud: initial-upload-closes-no-bugs' "$(cat "$WORK/lintian.out")"
# What lintian says with its informational tags, every tag reviewed: an initial upload
# closes no ITP bug (the packages are built from the project's tree, not uploaded to
# Debian); the overrides (O:) say their reasons in packaging/debian/*.lintian-overrides.
expect_eq "lintian's warnings, informational tags and overrides are only the reviewed ones" \
	"O: rezuscloud hardening-no-fortify-functions O: rezuscloud package-supports-alternative-init-but-no-init O: rezuscloud-plugin-dev pkg-config-bad-directive W: rezuscloud initial-upload-closes-no-bugs W: rezuscloud-plugin-dev initial-upload-closes-no-bugs W: rezusctl initial-upload-closes-no-bugs" \
	"$(sed -n 's/^\([WIPXO]\): \([a-z-]*\): \([a-z-]*\).*/\1: \2 \3/p' "$WORK/lintian.out" | sort | tr '\n' ' ' | sed 's/ $//')"

# --- what each package holds ----------------------------------------------------------------------
# expect_list DESCRIPTION EXPECTED ACTUAL: two lists of lines; a difference is shown as a diff.
expect_list() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		printf '%s\n' "$2" >"$WORK/expected"
		printf '%s\n' "$3" >"$WORK/actual"
		not_ok "$1" "$(diff "$WORK/expected" "$WORK/actual" | sed '1!s/^/# /')"
	fi
}
# Files only (directories aside), the multiarch triplet written as TRIPLET, sorted. dh_compress
# compresses a document of /usr/share/doc only past 4 KiB, so a document is listed without its .gz.
files() {
	dpkg-deb -c "$1" | awk '$1 !~ /^d/ { print $6 }' |
		sed "s|^\./||; s|$TRIPLET|TRIPLET|; s|^\(usr/share/doc/.*\.md\)\.gz\$|\1|" | sort
}
expect_list "rezuscloud holds the daemon, plugins, unit, user, config, pages and docs" "$(sort <<'EOF'
etc/rezus/rezus.conf
lib/systemd/system/rezuscloud.service
usr/lib/TRIPLET/rezus/plugins/metal.so
usr/lib/TRIPLET/rezus/plugins/oci.so
usr/lib/TRIPLET/rezus/plugins/openstack.so
usr/lib/TRIPLET/rezus/plugins/sim.so
usr/lib/TRIPLET/rezus/plugins/talos.so
usr/lib/sysusers.d/rezus.conf
usr/lib/tmpfiles.d/rezus.conf
usr/sbin/rezuscloud
usr/share/lintian/overrides/rezuscloud
usr/share/doc/rezuscloud/api.md
usr/share/doc/rezuscloud/architecture.md
usr/share/doc/rezuscloud/backups.md
usr/share/doc/rezuscloud/benchmarks.md
usr/share/doc/rezuscloud/changelog.Debian.gz
usr/share/doc/rezuscloud/copyright
usr/share/doc/rezuscloud/configuration.md
usr/share/doc/rezuscloud/getting-started.md
usr/share/doc/rezuscloud/hardening.md
usr/share/doc/rezuscloud/metrics.md
usr/share/doc/rezuscloud/migration.md
usr/share/doc/rezuscloud/operations.md
usr/share/doc/rezuscloud/runners.md
usr/share/doc/rezuscloud/security.md
usr/share/man/man5/rezus.conf.5.gz
usr/share/man/man8/rezuscloud.8.gz
EOF
)" "$(files "$DEB_D")"
expect_list "rezusctl holds the client, its completions, its page and boot's manifest" "$(sort <<'EOF'
usr/bin/rezusctl
usr/share/bash-completion/completions/rezusctl
usr/share/doc/rezusctl/README.md
usr/share/doc/rezusctl/changelog.Debian.gz
usr/share/doc/rezusctl/copyright
usr/share/man/man1/rezusctl.1.gz
usr/share/rezus/deploy/kubernetes/rezuscloud.yaml
usr/share/zsh/vendor-completions/_rezusctl
EOF
)" "$(files "$DEB_C")"
expect_list "rezuscloud-plugin-dev holds the SDK, the checker, its pages and the example" "$(sort <<'EOF'
usr/bin/rezus-plugin-check
usr/include/rezus/errors.h
usr/include/rezus/host.h
usr/include/rezus/plugin.h
usr/include/rezus/version.h
usr/lib/TRIPLET/pkgconfig/rezus-plugin.pc
usr/share/doc/rezuscloud-plugin-dev/changelog.Debian.gz
usr/share/doc/rezuscloud-plugin-dev/copyright
usr/share/doc/rezuscloud-plugin-dev/example/Makefile
usr/share/doc/rezuscloud-plugin-dev/example/example.c
usr/share/doc/rezuscloud-plugin-dev/plugin-guide.md
usr/share/lintian/overrides/rezuscloud-plugin-dev
usr/share/man/man1/rezus-plugin-check.1.gz
usr/share/man/man7/rezus-plugin.7.gz
EOF
)" "$(files "$DEB_DEV")"
# Every document of docs/ reaches an operator or a vendor: in one of the packages, once.
expect_eq "every document of docs/ is in exactly one package" \
	"$(cd "$top_srcdir/docs" && ls *.md | sort | tr '\n' ' ')" \
	"$(for d in "$DEB_D" "$DEB_C" "$DEB_DEV"; do files "$d"; done |
		sed -n 's|^usr/share/doc/[^/]*/\([a-z-]*\.md\)$|\1|p' | grep -v '^README\.md$' | sort | tr '\n' ' ')"
expect_eq "the -dev package provides rezuscloud-abi-$ABI" "rezuscloud-abi-$ABI" "$(dpkg-deb -f "$DEB_DEV" Provides)"
expect_match "the daemon's Depends come from its libraries" 'libevent-2\.1-7.*libsqlite3-0|libsqlite3-0.*libevent' "$(dpkg-deb -f "$DEB_D" Depends)"
expect_match "and systemd-sysusers, which makes the system user" 'systemd-sysusers' "$(dpkg-deb -f "$DEB_D" Depends)"
expect_match "it says where tofu or terraform comes from" 'neither is packaged in Debian' "$(dpkg-deb -f "$DEB_D" Description)"
mkdir -p "$WORK/ctl"
dpkg-deb -e "$DEB_D" "$WORK/ctl"
expect_eq "rezus.conf is a conffile" "/etc/rezus/rezus.conf" "$(cat "$WORK/ctl/conffiles")"
# the user and the data dir from the shipped sysusers.d and tmpfiles.d, nothing by hand
expect_match "the postinst makes the rezus user with systemd-sysusers (dh_installsysusers)" 'systemd-sysusers .*rezus\.conf' "$(cat "$WORK/ctl/postinst")"
expect_match "and the data dir with systemd-tmpfiles (dh_installtmpfiles)" 'systemd-tmpfiles .*--create .*rezus\.conf' "$(cat "$WORK/ctl/postinst")"
expect_eq "and nothing else: no adduser, no install -d" "" "$(grep -E 'adduser|useradd|install -d|chmod' "$WORK/ctl/postinst")"
expect_match "it enables the unit" "deb-systemd-helper enable 'rezuscloud.service'|deb-systemd-helper enable rezuscloud.service" "$(cat "$WORK/ctl/postinst")"
expect_eq "and does not start it" "" "$(grep -E 'deb-systemd-invoke (start|restart)|invoke-rc.d .*start' "$WORK/ctl/postinst")"

ROOT="$WORK/root"
for d in "$DEB_D" "$DEB_C" "$DEB_DEV"; do dpkg-deb -x "$d" "$ROOT"; done

# --- the extracted programs -----------------------------------------------------------------------
expect_match "the extracted rezuscloud --version" "^rezuscloud $VERSION " "$("$ROOT/usr/sbin/rezuscloud" --version 2>&1 | head -n 1)"
expect_match "the extracted rezusctl version (no server)" "^Client: rezusctl $VERSION" "$("$ROOT/usr/bin/rezusctl" --server http://127.0.0.1:9 version 2>/dev/null)"
PCDIR="$ROOT/usr/lib/$TRIPLET/pkgconfig"
PKGC="env PKG_CONFIG_LIBDIR=$PCDIR PKG_CONFIG_SYSROOT_DIR=$ROOT pkg-config"
expect_eq "rezus-plugin.pc states the ABI major" "$ABI" "$($PKGC --variable=abi_major rezus-plugin)"
expect_eq "and plugins' home" "/usr/lib/$TRIPLET/rezus/plugins" \
	"$(PKG_CONFIG_LIBDIR=$PCDIR pkg-config --variable=plugindir rezus-plugin)"
expect_match "its cflags point into the extracted headers" "^-I$ROOT/usr/include " "$($PKGC --cflags rezus-plugin)"
cp -r "$ROOT/usr/share/doc/rezuscloud-plugin-dev/example" "$WORK/example"
if make -C "$WORK/example" PKG_CONFIG="$PKGC" CFLAGS="-O2 -g -Werror" \
	REZUS_PLUGIN_CHECK="$ROOT/usr/bin/rezus-plugin-check" check >"$WORK/example.log" 2>&1; then
	ok "the example builds against the extracted -dev package with -Wall -Wextra -Werror"
else
	not_ok "the example builds against the extracted -dev package with -Wall -Wextra -Werror" "$(cat "$WORK/example.log")"
fi
expect_match "and the extracted rezus-plugin-check passes it" '^OK: 0 checks failed, 0 warnings$' "$(cat "$WORK/example.log")"

# The extracted daemon with every shipped plugin and the example, started the way the
# unit starts it (NOTIFY_SOCKET set): it says READY=1 once it listens.
mkdir -p "$WORK/plugins"
for p in "$ROOT/usr/lib/$TRIPLET/rezus/plugins/"*.so "$WORK/example/example.so"; do ln -s "$p" "$WORK/plugins/"; done
cat >"$WORK/rezus.conf" <<CONF
server:
  listen: 127.0.0.1:0
  data_dir: $WORK/data
plugin_dir: $WORK/plugins
plugins:
  talos: {}
  oci: {}
  openstack: {}
  metal: {}
  sim: {}
  example: {}
CONF
python3 - "$WORK/notify" >"$WORK/notify.out" 2>&1 <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
print(s.recv(4096).decode(), flush=True)
PY
NOTIFY_PID=$!
for _ in $(seq 1 100); do [ -S "$WORK/notify" ] && break; sleep 0.05; done
REZUSCLOUD="$ROOT/usr/sbin/rezuscloud"
if NOTIFY_SOCKET="$WORK/notify" REZUSCLOUD_ADMIN_PASSWORD=pkg-test-pw start_daemon "$WORK/daemon.log" -c "$WORK/rezus.conf"; then
	ok "the extracted daemon starts with the shipped plugins and the example"
else
	not_ok "the extracted daemon starts with the shipped plugins and the example" "$(cat "$WORK/daemon.log")"
fi
expect_eq "it loads all six" "example metal oci openstack sim talos" \
	"$(sed -n 's/.*msg="plugin started" plugin=\([a-z]*\) .*/\1/p' "$WORK/daemon.log" | sort | tr '\n' ' ' | sed 's/ $//')"
wait "$NOTIFY_PID"
expect_match "it tells the service manager it is ready" "^READY=1" "$(cat "$WORK/notify.out")"
expect_match "and on which port" "STATUS=serving http on port $PORT" "$(cat "$WORK/notify.out")"
expect_match "the extracted rezusctl version reaches it" "^Server: rezuscloud $VERSION" \
	"$("$ROOT/usr/bin/rezusctl" --server "http://127.0.0.1:$PORT" version 2>&1)"
kill -TERM "$DAEMON_PID"
wait_exit "$DAEMON_PID" 10
expect_eq "it stops on SIGTERM" "0" "$EXIT_STATUS"
DAEMON_PID=""

# --- one mode for the data dir, one licence -------------------------------------------------------
# The data dir is private: the daemon makes what it finds there 0700/0600 (core/store/datadir.c)
# and logs it, so every place that makes the dir gives it that mode, or each start would
# rewrite what the package set.
TMPF_MODE=$(awk '$1 == "d" && $2 == "/var/lib/rezus" { print $3 }' "$ROOT/usr/lib/tmpfiles.d/rezus.conf")
expect_eq "tmpfiles.d makes /var/lib/rezus 0700" "0700" "$TMPF_MODE"
expect_eq "the unit's StateDirectoryMode is the same" "StateDirectoryMode=$TMPF_MODE" \
	"$(grep '^StateDirectoryMode=' "$ROOT/lib/systemd/system/rezuscloud.service")"
expect_eq "the Containerfile makes it with the same" "-m $TMPF_MODE /var/lib/rezus" \
	"$(grep -o -- '-m [0-7]* /var/lib/rezus' "$SRC/packaging/container/Containerfile")"
expect_eq "the RPM leaves it to tmpfiles.d (no mode of its own)" "" \
	"$(grep -nE 'attr\(0[0-7]*,rezus|install -d .*lib/rezus' "$SRC/packaging/rpm/rezuscloud.spec.in")"
moded() { # LOG: the extracted daemon on WORK/moded until it is ready, then stopped
	REZUSCLOUD_ADMIN_PASSWORD=pkg-test-pw "$REZUSCLOUD" -c "$WORK/rezus.conf" \
		--data-dir "$WORK/moded" --listen 127.0.0.1:0 >"$1" 2>&1 &
	MPID=$!
	for _ in $(seq 1 100); do grep -q ' msg=ready ' "$1" && break; sleep 0.1; done
	kill -TERM "$MPID" 2>/dev/null
	wait "$MPID" 2>/dev/null
}
install -d -m "$TMPF_MODE" "$WORK/moded"
moded "$WORK/moded.log"
expect_eq "the daemon on a data dir of that mode changes nothing" "" \
	"$(grep 'open to group or others' "$WORK/moded.log")"
chmod 0750 "$WORK/moded"
moded "$WORK/moded2.log"
expect_match "(and on one of 0750 it says so: the check is real)" 'open to group or others' "$(cat "$WORK/moded2.log")"

# MIT, as the original RezusCloud: the same licence wherever one is stated.
expect_eq "LICENSE is the MIT licence" "MIT License" "$(head -n 1 "$SRC/LICENSE")"
expect_eq "debian/copyright: the project's files are Expat (Debian's name for MIT)" "Expat" \
	"$(awk '/^Files: \*$/ { f = 1; next } f && /^License:/ { print $2; exit }' "$ROOT/usr/share/doc/rezuscloud/copyright")"
expect_eq "the RPM spec says MIT" "License:        MIT" "$(grep '^License:' "$SRC/packaging/rpm/rezuscloud.spec.in")"
expect_eq "the image's label says MIT" 'org.opencontainers.image.licenses="MIT"' \
	"$(grep -o 'org.opencontainers.image.licenses="[^"]*"' "$SRC/packaging/container/Containerfile")"

# --- the unit -------------------------------------------------------------------------------------
# As shipped, but for ExecStart naming the extracted daemon (verify checks it exists).
mkdir -p "$WORK/unit"
sed "s|^ExecStart=/usr/sbin/rezuscloud|ExecStart=$ROOT/usr/sbin/rezuscloud|" \
	"$ROOT/lib/systemd/system/rezuscloud.service" >"$WORK/unit/rezuscloud.service"
out=$(MANPATH="$ROOT/usr/share/man" systemd-analyze verify "$WORK/unit/rezuscloud.service" 2>&1)
expect_eq "systemd-analyze verify finds nothing to say about the unit" "0:" "$?:$out"
for line in Type=notify User=rezus StateDirectory=rezus ConfigurationDirectory=rezus \
	LimitNOFILE=65536 ProtectSystem=strict ProtectHome=yes PrivateTmp=yes NoNewPrivileges=yes \
	"RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6" SystemCallFilter=@system-service \
	CapabilityBoundingSet= Restart=on-failure; do
	expect_eq "the unit says $line" "$line" "$(grep -x -- "$line" "$WORK/unit/rezuscloud.service")"
done
exposure=$(systemd-analyze security --offline=yes "$WORK/unit/rezuscloud.service" 2>/dev/null |
	sed -n 's/.*Overall exposure level for rezuscloud.service: \([0-9.]*\).*/\1/p')
echo "# systemd-analyze security: exposure $exposure"
expect_eq "its exposure (systemd-analyze security) is under 2.0" "yes" \
	"$(awk -v e="$exposure" 'BEGIN { print (e != "" && e + 0 < 2.0) ? "yes" : "no (" e ")" }')"

# --- the RPMs, from the same tarball --------------------------------------------------------------
# Debian cannot satisfy the spec's BuildRequires (RPM names): --nodeps.
mkdir -p "$WORK/rpm/SOURCES"
cp "$WORK/rezuscloud-$VERSION.tar.gz" "$WORK/rpm/SOURCES/"
start=$(date +%s)
if rpmbuild -bb --nodeps --nocheck --define "_topdir $WORK/rpm" --define "_smp_mflags -j2" \
	"$SRC/packaging/rpm/rezuscloud.spec" >"$WORK/rpm.log" 2>&1; then
	ok "rpmbuild -bb builds the RPMs from the tarball"
else
	not_ok "rpmbuild -bb builds the RPMs from the tarball" "$(tail -n 30 "$WORK/rpm.log")"
fi
echo "# the RPM build took $(($(date +%s) - start)) s"
rpmfiles() {
	f=$(find "$WORK/rpm/RPMS" -name "$1-$VERSION-1*.rpm" | head -n 1)
	# build-id links aside; manual pages compressed or not (Debian's rpm has no brp-compress)
	[ -n "$f" ] && rpm -qlp "$f" 2>/dev/null | grep -v '^/usr/lib/\.build-id' |
		sed 's|/usr/lib64/|/usr/LIBDIR/|; s|/usr/lib/\(rezus\|pkgconfig\)|/usr/LIBDIR/\1|; s|\(/man[0-9]/.*\)\.gz$|\1|' |
		sed "s|^\(/usr/share/licenses/[a-z-]*\)-$VERSION|\1-VERSION|" | sort
}
expect_list "the rezuscloud RPM" "$(sort <<'EOF'
/etc/rezus
/etc/rezus/rezus.conf
/usr/LIBDIR/rezus
/usr/LIBDIR/rezus/plugins
/usr/LIBDIR/rezus/plugins/metal.so
/usr/LIBDIR/rezus/plugins/oci.so
/usr/LIBDIR/rezus/plugins/openstack.so
/usr/LIBDIR/rezus/plugins/sim.so
/usr/LIBDIR/rezus/plugins/talos.so
/usr/lib/systemd/system/rezuscloud.service
/usr/lib/sysusers.d/rezus.conf
/usr/lib/tmpfiles.d/rezus.conf
/usr/sbin/rezuscloud
/usr/share/doc/rezuscloud
/usr/share/doc/rezuscloud/api.md
/usr/share/doc/rezuscloud/architecture.md
/usr/share/doc/rezuscloud/backups.md
/usr/share/doc/rezuscloud/benchmarks.md
/usr/share/doc/rezuscloud/configuration.md
/usr/share/doc/rezuscloud/getting-started.md
/usr/share/doc/rezuscloud/hardening.md
/usr/share/doc/rezuscloud/metrics.md
/usr/share/doc/rezuscloud/migration.md
/usr/share/doc/rezuscloud/operations.md
/usr/share/doc/rezuscloud/runners.md
/usr/share/doc/rezuscloud/security.md
/usr/share/man/man5/rezus.conf.5
/usr/share/man/man8/rezuscloud.8
/usr/share/licenses/rezuscloud-VERSION
/usr/share/licenses/rezuscloud-VERSION/LICENSE
EOF
)" "$(rpmfiles rezuscloud)"
expect_list "the rezusctl RPM" "$(sort <<'EOF'
/usr/bin/rezusctl
/usr/share/bash-completion/completions/rezusctl
/usr/share/man/man1/rezusctl.1
/usr/share/rezus
/usr/share/rezus/deploy
/usr/share/rezus/deploy/kubernetes
/usr/share/rezus/deploy/kubernetes/rezuscloud.yaml
/usr/share/zsh/site-functions/_rezusctl
/usr/share/licenses/rezusctl-VERSION
/usr/share/licenses/rezusctl-VERSION/LICENSE
EOF
)" "$(rpmfiles rezusctl)"
expect_list "the rezuscloud-plugin-devel RPM" "$(sort <<'EOF'
/usr/bin/rezus-plugin-check
/usr/include/rezus
/usr/include/rezus/errors.h
/usr/include/rezus/host.h
/usr/include/rezus/plugin.h
/usr/include/rezus/version.h
/usr/LIBDIR/pkgconfig/rezus-plugin.pc
/usr/share/doc/rezuscloud/example
/usr/share/doc/rezuscloud/example/Makefile
/usr/share/doc/rezuscloud/example/example.c
/usr/share/doc/rezuscloud/plugin-guide.md
/usr/share/man/man1/rezus-plugin-check.1
/usr/share/man/man7/rezus-plugin.7
/usr/share/licenses/rezuscloud-plugin-devel-VERSION
/usr/share/licenses/rezuscloud-plugin-devel-VERSION/LICENSE
EOF
)" "$(rpmfiles rezuscloud-plugin-devel)"
DEVEL_RPM=$(find "$WORK/rpm/RPMS" -name "rezuscloud-plugin-devel-$VERSION-1*.rpm" | head -n 1)
expect_match "the -devel RPM provides rezuscloud-abi-$ABI (versioned)" "^rezuscloud-abi-$ABI = $VERSION-1\$" \
	"$([ -n "$DEVEL_RPM" ] && rpm -qp --provides "$DEVEL_RPM" 2>/dev/null)"
MAIN_RPM=$(find "$WORK/rpm/RPMS" -name "rezuscloud-$VERSION-1*.rpm" | head -n 1)
expect_eq "the RPMs' licence is MIT" "MIT" "$([ -n "$MAIN_RPM" ] && rpm -qp --qf '%{LICENSE}' "$MAIN_RPM")"
# The scriptlets are shell, whether or not the builder had systemd's RPM macros (Debian's
# rpm has none: the spec's fallbacks).
scripts=$([ -n "$MAIN_RPM" ] && rpm -qp --scripts "$MAIN_RPM" 2>/dev/null)
expect_eq "no scriptlet holds an unexpanded macro" "" "$(printf '%s\n' "$scripts" | grep -v '^#' | grep '%')"
expect_match "%post makes the data dir from tmpfiles.d and presets the unit" \
	'systemd-tmpfiles --create /usr/lib/tmpfiles.d/rezus.conf.*systemctl --no-reload preset rezuscloud.service' \
	"$(printf '%s\n' "$scripts" | tr '\n' ' ')"
# rpmlint: nothing but what packaging/rpm/rezuscloud.rpmlintrc names, each with its reason
# there (artefacts of building with Debian's rpm and rpmlint).
if command -v rpmlint >/dev/null 2>&1; then
	rpmlint -r "$SRC/packaging/rpm/rezuscloud.rpmlintrc" "$WORK/rpm/RPMS"/*/*.rpm \
		"$SRC/packaging/rpm/rezuscloud.spec" >"$WORK/rpmlint.out" 2>&1
	sed 's/^/# rpmlint: /' "$WORK/rpmlint.out" | tail -n 3
	expect_match "rpmlint: 0 errors, 0 warnings on the RPMs and the spec" \
		'3 packages and 1 specfiles checked; 0 errors, 0 warnings' "$(cat "$WORK/rpmlint.out")"
	rpmlint "$WORK/rpm/RPMS"/*/*.rpm "$SRC/packaging/rpm/rezuscloud.spec" >"$WORK/rpmlint-all.out" 2>&1
	sed -n 's/^\(.*checked;.*\)/# rpmlint without the file: \1/p' "$WORK/rpmlint-all.out"
	expect_eq "without the file, only the tags it names are said" "" \
		"$(sed -n 's/^[^ ]*: [EW]: \([a-z%-]*\).*/\1/p' "$WORK/rpmlint-all.out" | sort -u |
			grep -vxF "$(sed -n 's/^addFilter("\([a-z-]*\).*/\1/p' "$SRC/packaging/rpm/rezuscloud.rpmlintrc")")"
else
	not_ok "rpmlint is installed (tools/install-deps installs it)"
fi

done_testing
