# The Debian package (issue 17): scripts/package makes fdl-mirror_*.deb and its -dbgsym .ddeb
# from the build; their control fields and contents are checked (dependencies from
# dpkg-shlibdeps without the private libssh and DuckDB, the unit for /usr, every page the
# installed documentation links to, a stripped binary whose debug information is in the
# dbgsym package by build id). Then the package is installed for real, with apt-get (dpkg -i
# when apt cannot), and the install sequence of docs/operations.md is followed up to
# check-config; last it is purged. All of it runs in a mount namespace of its own where /etc,
# /usr and /var are overlays whose changes go to a tmpfs that ends with the test, and /run
# an empty tmpfs (no systemd to talk to): the install, the user it makes and the purge
# change nothing on this machine, which may have fdl-mirror installed or running (issue 33).
# Needs root: it mounts and installs.
if [ -z "${FDL_MIRROR_PACKAGE_LAYERS:-}" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "FAIL: this test installs a Debian package into overlays of /etc, /usr and /var: run it as root" >&2
    exit 1
  fi
  layers=$(mktemp -d /tmp/fdl-mirror-package-layers.XXXXXX)
  status=0
  # The layers on a tmpfs of the namespace's own: an upper layer cannot sit on an overlay
  # (a container's root) nor inside the folder it covers.
  FDL_MIRROR_PACKAGE_LAYERS=$layers unshare --mount --propagation private bash -c '
    set -e
    mount -t tmpfs -o size=2g,mode=0700 fdl-mirror-package-layers "$FDL_MIRROR_PACKAGE_LAYERS"
    for dir in etc usr var; do
      mkdir "$FDL_MIRROR_PACKAGE_LAYERS/$dir.upper" "$FDL_MIRROR_PACKAGE_LAYERS/$dir.work"
      mount -t overlay "fdl-mirror-package-$dir" \
        -o "lowerdir=/$dir,upperdir=$FDL_MIRROR_PACKAGE_LAYERS/$dir.upper,workdir=$FDL_MIRROR_PACKAGE_LAYERS/$dir.work" "/$dir"
    done
    mount -t tmpfs -o mode=0755 fdl-mirror-package-run /run
    exec bash "$0"' "$0" || status=$?
  rmdir "$layers" 2>/dev/null || rm -rf --one-file-system "$layers"
  exit "$status"
fi
: "${FDL_PUBLISHER:=unused}"   # lib.sh asks for it; nothing is published here
source "$(dirname "$0")/lib.sh"
: "${SOURCE_DIR:?set by ctest}"
build=$(dirname "$FDL_MIRROR")   # the binary is built at the top of its build tree
for dir in /etc /usr /var; do
  [ "$(findmnt -n -o FSTYPE "$dir")" = overlay ] && pass || { fail "$dir is not this test's overlay"; finish; exit 1; }
done
# An earlier install of fdl-mirror on this machine shows through the overlays: removed in
# them (only there), so that the install below starts from nothing.
if dpkg-query -W -f='${Status}' fdl-mirror 2>/dev/null | grep -q 'installed\|config-files\|unpacked'; then
  echo "fdl-mirror is installed on this machine: purged in this test's overlays only"
  dpkg --purge fdl-mirror >/dev/null 2>&1 || true
fi
rm -rf /etc/fdl-mirror /var/lib/fdl-mirror

# --- scripts/package: the two files, named as Debian names them ----------------------------
version=$(sed -n 's/^project(fdl-mirror VERSION \([0-9.]*\) .*/\1/p' "$SOURCE_DIR/CMakeLists.txt")-1
arch=$(dpkg --print-architecture)
deb=$work/packages/fdl-mirror_${version}_$arch.deb
ddeb=$work/packages/fdl-mirror-dbgsym_${version}_$arch.ddeb
# Files of an earlier run are replaced, and CPack's staging folder does not stay behind (a
# second run costs 20 s, so the stale files stand in for the first run).
mkdir -p "$work/packages/_CPack_Packages"
touch "$work/packages/fdl-mirror_0.0.1-1_$arch.deb" "$work/packages/fdl-mirror-dbgsym_0.0.1-1_$arch.ddeb"
expect_status 0 "scripts/package" -- env FDL_MIRROR_BUILD_DIR="$build" "$SOURCE_DIR/scripts/package" "$work/packages"
[ "$(cat "$work/out")" = "$deb"$'\n'"$ddeb" ] && pass ||
  fail "scripts/package printed '$(cat "$work/out")', want $deb and $ddeb"
[ -f "$deb" ] && [ -f "$ddeb" ] || { fail "scripts/package made no $deb and $ddeb"; finish; exit 1; }
[ "$(cd "$work/packages" && LC_ALL=C ls -A | tr '\n' ' ')" = "cpack.log $(basename "$ddeb") $(basename "$deb") " ] && pass ||
  fail "scripts/package's folder holds $(ls -A "$work/packages" | tr '\n' ' '), want the log and the two packages"

# --- control fields --------------------------------------------------------------------------
field() { dpkg-deb --field "$1" "$2"; }
[ "$(field "$deb" Package)" = fdl-mirror ] && pass || fail "Package: is '$(field "$deb" Package)'"
[ "$(field "$deb" Version)" = "$version" ] && pass || fail "Version: is '$(field "$deb" Version)', want $version"
[ "$(field "$deb" Architecture)" = "$arch" ] && pass || fail "Architecture: is '$(field "$deb" Architecture)'"
[ -n "$(field "$deb" Maintainer)" ] && [ -n "$(field "$deb" Section)" ] && pass || fail "no Maintainer: or Section:"
depends=$(field "$deb" Depends)
echo "Depends: $depends"
# From dpkg-shlibdeps over the binary and the private libraries; the sysusers and tmpfiles tools
# for postinst.
for want in 'libc6 (>=' 'libstdc++6 (>=' 'libssl3 (>=' 'libyaml-cpp0.7 (>=' 'libprometheus-cpp-core' \
  'systemd | systemd-standalone-sysusers' 'systemd | systemd-standalone-tmpfiles'; do
  case $depends in *"$want"*) pass ;; *) fail "Depends: lacks '$want': $depends" ;; esac
done
# libssh 0.12 and DuckDB are inside the package: Debian's libssh-4 is 0.10, and has no DuckDB.
case $depends in *libssh* | *duckdb*) fail "Depends: names a library the package carries: $depends" ;; *) pass ;; esac
dpkg-deb --control "$deb" "$work/control"
# Maintainer scripts, and no conffiles: nothing under /etc is shipped.
[ "$(cd "$work/control" && LC_ALL=C ls | tr '\n' ' ')" = "control md5sums postinst postrm prerm " ] && pass ||
  fail "the control archive holds $(ls "$work/control" | tr '\n' ' '), want control md5sums postinst postrm prerm"
for script in postinst prerm postrm; do
  file=$work/control/$script
  [ -x "$file" ] && head -1 "$file" | grep -qx '#!/bin/sh' && grep -qx 'set -e' "$file" && sh -n "$file" && pass ||
    fail "$script is not an executable POSIX sh script with set -e"
done
grep -Eq '^[[:space:]]*systemctl[^#]*[[:space:]](enable|start)[[:space:]]' "$work/control/postinst" &&
  fail "postinst enables or starts the service" || pass
[ "$(field "$ddeb" Package)" = fdl-mirror-dbgsym ] && pass || fail "the .ddeb's Package: is '$(field "$ddeb" Package)'"
[ "$(field "$ddeb" Depends)" = "fdl-mirror (= $version)" ] && pass || fail "the .ddeb's Depends: is '$(field "$ddeb" Depends)'"
echo "size: $(stat -c %s "$deb") bytes (.deb), $(stat -c %s "$ddeb") bytes (.ddeb); installed: $(field "$deb" Installed-Size) KiB"

# --- contents ----------------------------------------------------------------------------------
root=$work/root
dpkg-deb --extract "$deb" "$root"
dpkg-deb --extract "$ddeb" "$work/dbgsym"
# The private library folder: lib/fdl-mirror, or lib/<multiarch>/fdl-mirror when the build was
# configured for the prefix /usr (daemon/CMakeLists.txt).
libdir=$(cd "$root/usr" && find lib -mindepth 1 -maxdepth 2 -type d -name fdl-mirror | head -1)
for path in bin/fdl-mirror lib/systemd/system/fdl-mirror.service lib/sysusers.d/fdl-mirror.conf \
  lib/tmpfiles.d/fdl-mirror.conf share/fdl-mirror/fdl-mirror.rules.yml share/fdl-mirror/grafana/fdl-mirror.json \
  share/man/man1/fdl-mirror.1.gz share/man/man5/fdl-mirror.yaml.5.gz share/bash-completion/completions/fdl-mirror \
  share/zsh/vendor-completions/_fdl-mirror share/doc/fdl-mirror/config.example.yaml share/doc/fdl-mirror/copyright \
  share/doc/fdl-mirror/changelog.Debian.gz "$libdir/libssh.so.4" "$libdir/libduckdb.so"; do
  [ -e "$root/usr/$path" ] && pass || fail "the package lacks /usr/$path"
done
[ -z "$(find "$root" -mindepth 1 -maxdepth 1 ! -name usr)" ] && pass ||
  fail "the package installs outside /usr: $(find "$root" -mindepth 1 -maxdepth 1 ! -name usr)"
while read -r installed source; do
  cmp -s "$root/usr/$installed" "$SOURCE_DIR/$source" && pass || fail "/usr/$installed is not a copy of $source"
done <<'EOF'
lib/sysusers.d/fdl-mirror.conf systemd/fdl-mirror.sysusers
lib/tmpfiles.d/fdl-mirror.conf systemd/fdl-mirror.tmpfiles
share/fdl-mirror/grafana/fdl-mirror.json systemd/fdl-mirror.grafana.json
share/fdl-mirror/fdl-mirror.alertmanager.yml systemd/fdl-mirror.alertmanager.yml
share/doc/fdl-mirror/config.example.yaml systemd/config.example.yaml
share/doc/fdl-mirror/operations.md docs/operations.md
EOF
for page in "$root"/usr/share/man/man*/*; do
  case $page in *.gz) gzip -t "$page" && pass || fail "$page is not gzip" ;; *) fail "$page is not compressed" ;; esac
done
# Written for /usr at packing time, not for CPack's staging folder.
unit=$root/usr/lib/systemd/system/fdl-mirror.service
grep -qx 'ExecStart=/usr/bin/fdl-mirror run --config /etc/fdl-mirror/config.yaml' "$unit" && pass ||
  fail "the unit's ExecStart= is not /usr/bin/fdl-mirror: $(grep '^ExecStart=' "$unit")"
grep -qx 'Documentation=file:/usr/share/doc/fdl-mirror/operations.md' "$unit" && pass ||
  fail "the unit's Documentation= is not the installed guide: $(grep '^Documentation=' "$unit")"
rules=$root/usr/share/fdl-mirror/fdl-mirror.rules.yml
[ "$(grep -c 'runbook_url: file:///usr/share/doc/fdl-mirror/operations.md#' "$rules")" = \
  "$(grep -c '^ *runbook_url:' "$SOURCE_DIR/systemd/fdl-mirror.rules.yml")" ] && pass ||
  fail "not every runbook_url is file:///usr/share/doc/fdl-mirror/operations.md#…: $(grep -m3 'runbook_url:' "$rules")"
grep -rlI -e _CPack_Packages -e "$work" "$root" >"$work/staging-paths" || true
[ ! -s "$work/staging-paths" ] && pass || fail "files name the staging folder: $(cat "$work/staging-paths")"

# Every relative link of the installed pages leads to an installed file (the pages name files
# of the source tree beyond docs/ as text, not as links).
doc=$root/usr/share/doc/fdl-mirror
for page in "$doc"/*.md; do
  for target in $(grep -o '](\([^)#]*\)\(#[^)]*\)\{0,1\})' "$page" | sed 's/^](\([^)#]*\).*/\1/' | sort -u); do
    case $target in '' | *://* | mailto:*) continue ;; esac
    [ -e "$doc/$target" ] && pass || fail "$(basename "$page") links to $target, which the package does not install"
  done
done

# Stripped, with the debug information in the dbgsym package under its build id.
# The binary's is DWARF (.debug_info); the libraries', their symbol tables (scripts/setup's
# libssh and DuckDB's library are built without -g).
for elf in bin/fdl-mirror:.debug_info "$libdir/libssh.so.4:.symtab" "$libdir/libduckdb.so:.symtab"; do
  section=${elf#*:} elf=${elf%:*}
  # readelf's output whole, before it is matched: it may exit 1 on a debug file (no program
  # interpreter), and a grep -q that stops reading early would kill it under pipefail.
  info=$(file -L "$root/usr/$elf")
  case $info in *", stripped"*) pass ;; *) fail "/usr/$elf is not stripped: $info" ;; esac
  sections=$(readelf -S "$root/usr/$elf" 2>/dev/null || true)
  case $sections in *" .debug_info "* | *" .symtab "*) fail "/usr/$elf keeps .debug_info or .symtab" ;; *) pass ;; esac
  id=$(readelf -n "$root/usr/$elf" 2>/dev/null | sed -n 's/^ *Build ID: *//p' || true)
  debug=$work/dbgsym/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
  if [ -n "$id" ] && [ -f "$debug" ]; then
    sections=$(readelf -S "$debug" 2>/dev/null || true)
    case $sections in *" $section "*) pass ;; *) fail "$debug has no $section" ;; esac
  else fail "the dbgsym package has no /usr/lib/debug/.build-id/ file for /usr/$elf (build id '$id')"; fi
done

# --- installed for real ----------------------------------------------------------------------
# apt resolves the dependencies (all present on a machine that built the tree); dpkg -i when apt
# cannot run (its lock held, say).
if env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$deb" \
  >"$work/install.log" 2>&1; then
  pass
else
  echo "apt-get install failed, trying dpkg -i: $(tail -3 "$work/install.log")"
  expect_status 0 "dpkg -i" -- dpkg -i "$deb"
fi
[ "$(dpkg-query -W -f='${Status}' fdl-mirror 2>/dev/null)" = "install ok installed" ] && pass ||
  { fail "fdl-mirror is not installed: $(cat "$work/install.log")"; finish; exit 1; }

# The maintainer scripts run again (an upgrade to the same version): they create only what
# is missing.
expect_status 0 "dpkg -i over the installed package" -- dpkg -i "$deb"

# The program, with its own libssh 0.12 from the private folder (Debian's is 0.10).
version_text=$(env -i /usr/bin/fdl-mirror --version 2>&1) || true
case $version_text in
  *"libssh 0.12"*) pass ;;
  *) fail "the installed fdl-mirror does not run with its own libssh 0.12: $version_text" ;;
esac
# postinst's user and folders.
IFS=: read -r _ _ uid _ _ home shell < <(getent passwd fdl-mirror) || true
[ -n "${uid:-}" ] && [ "$uid" -lt 1000 ] && pass || fail "postinst made no system user fdl-mirror"
[ "${home:-}" = /var/lib/fdl-mirror ] && [ "${shell:-}" = /usr/sbin/nologin ] && pass ||
  fail "fdl-mirror's home and shell are '${home:-}' '${shell:-}'"
while read -r path want; do
  got=$(stat -c '%a %U:%G' "$path" 2>/dev/null || echo missing)
  [ "$got" = "$want" ] && pass || fail "postinst: $path is '$got', want '$want'"
done <<'EOF'
/var/lib/fdl-mirror 750 fdl-mirror:fdl-mirror
/etc/fdl-mirror 750 root:fdl-mirror
/etc/fdl-mirror/keys 750 root:fdl-mirror
/etc/fdl-mirror/credentials 700 root:root
EOF
# Manual pages and completions, where man and the shells look.
if grep -rqs 'path-exclude.*/usr/share/man' /etc/dpkg/dpkg.cfg.d; then
  fail "this machine's dpkg drops manual pages (path-exclude in /etc/dpkg/dpkg.cfg.d): man cannot be checked"
else
  [ "$(man -w fdl-mirror 2>/dev/null)" = /usr/share/man/man1/fdl-mirror.1.gz ] && pass ||
    fail "man -w fdl-mirror says '$(man -w fdl-mirror 2>&1)'"
  [ "$(man -w fdl-mirror.yaml 2>/dev/null)" = /usr/share/man/man5/fdl-mirror.yaml.5.gz ] && pass ||
    fail "man -w fdl-mirror.yaml says '$(man -w fdl-mirror.yaml 2>&1)'"
fi
bash -c 'source /usr/share/bash-completion/completions/fdl-mirror && complete -p fdl-mirror' >/dev/null 2>&1 && pass ||
  fail "the installed bash completion does not define one for fdl-mirror"
head -1 /usr/share/zsh/vendor-completions/_fdl-mirror | grep -q '^#compdef fdl-mirror' && pass ||
  fail "the installed zsh completion does not start with #compdef fdl-mirror"

# docs/operations.md's sequence: the example copied into place, its key file and CA bundle edited
# to files of this machine (made here), its credentials_file left at systemd's
# /run/credentials/fdl-mirror.service/s3: check-config passes before the first start, and says
# the credential will exist once the service runs.
ssh-keygen -q -t ed25519 -N '' -C ops -f "$work/key"
echo "ops@example.org namespaces=\"fdl\" $(cut -d' ' -f1,2 "$work/key.pub")" >"$work/population.allowed_signers"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=test-ca -days 2 \
  -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
install -m 0640 -g fdl-mirror /usr/share/doc/fdl-mirror/config.example.yaml /etc/fdl-mirror/config.yaml
sed -i -e "s|/etc/fdl-mirror/keys/population.allowed_signers|$work/population.allowed_signers|" \
  -e "s|/etc/ssl/internal-ca.pem|$work/ca.pem|" /etc/fdl-mirror/config.yaml
expect_status 0 "check-config of the installed example, edited as the install guide says" -- \
  /usr/bin/fdl-mirror check-config --config /etc/fdl-mirror/config.yaml
expect_output "warning: store 's3://internal-mirror/': credentials_file: /run/credentials/fdl-mirror.service/s3: does not exist now; systemd makes it when the service starts" \
  "the credential systemd makes at start noted"
# The installed unit, as systemd would load it; any word from verify is a failure.
if command -v systemd-analyze >/dev/null; then
  expect_status 0 "systemd-analyze verify of the installed unit" -- \
    systemd-analyze verify --man=no /usr/lib/systemd/system/fdl-mirror.service
  if [ -s "$work/out" ] || [ -s "$work/err" ]; then
    fail "systemd-analyze verify has something to say: $(cat "$work/out" "$work/err")"
  else pass; fi
fi
# Not enabled, not started (postinst leaves that to the operator).
[ ! -e /etc/systemd/system/multi-user.target.wants/fdl-mirror.service ] && pass || fail "the install enabled the service"

# --- purged --------------------------------------------------------------------------------------
expect_status 0 "dpkg --purge fdl-mirror" -- dpkg --purge fdl-mirror
[ ! -e /usr/bin/fdl-mirror ] && [ ! -e /usr/lib/systemd/system/fdl-mirror.service ] && [ ! -e "/usr/$libdir" ] && pass ||
  fail "the purge left the package's files"
[ ! -e /var/lib/fdl-mirror ] && pass || fail "the purge left /var/lib/fdl-mirror"
# The operator's files stay (the package never shipped them), and the note says so; the empty
# folders go.
[ -f /etc/fdl-mirror/config.yaml ] && [ ! -e /etc/fdl-mirror/keys ] && [ ! -e /etc/fdl-mirror/credentials ] && pass ||
  fail "after the purge /etc/fdl-mirror holds $(ls -A /etc/fdl-mirror 2>&1 | tr '\n' ' '), want config.yaml alone"
expect_output "left /etc/fdl-mirror in place" "the purge names what it left"
getent passwd fdl-mirror >/dev/null && pass || fail "the purge removed the user fdl-mirror (Debian leaves system users)"

finish
