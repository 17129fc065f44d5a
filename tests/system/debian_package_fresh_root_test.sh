# The Debian package on a clean machine (issue 17): where debian_package_test.sh installs it on
# the build machine, which already holds every library, this one installs it into a fresh
# Debian 12 root (debootstrap --variant=minbase, made anew each run), so a dependency missing
# from Depends: fails here. apt, chrooted, resolves Depends: from the archive this machine
# uses; then, in the root, `fdl-mirror --version`, the system user, every shared library of
# the binary found (ldd), and check-config of the installed example placed as
# docs/operations.md says. Nothing outside the test's folder changes: each chrooted step runs
# in its own mount namespace, so its /proc and /dev mounts end with it. Needs root and the
# network to the Debian archive.
: "${FDL_PUBLISHER:=unused}"   # lib.sh asks for it; nothing is published here
source "$(dirname "$0")/lib.sh"
: "${SOURCE_DIR:?set by ctest}"
build=$(dirname "$FDL_MIRROR")   # the binary is built at the top of its build tree
started=$SECONDS

if [ "$(id -u)" -ne 0 ]; then
  fail "this test makes a Debian root with debootstrap and chroots into it: run it as root"
  finish
  exit 1
fi
for tool in debootstrap unshare chroot findmnt ssh-keygen openssl; do
  command -v "$tool" >/dev/null || { fail "needs $tool (scripts/setup installs it)"; finish; exit 1; }
done

root=$work/root
# Whatever happens: nothing stays mounted under the root (each step's namespace took its
# mounts with it; a leftover is unmounted here), and only then is the folder deleted, never
# across a mount.
clean_up() {
  local status=$? mounts
  mounts=$(findmnt -rn -o TARGET | grep -F "$root/" | sort -r || true)
  if [ -n "$mounts" ]; then
    echo "debian_package_fresh_root_test: unmounting what is left under $root" >&2
    while read -r target; do umount -l "$target" || true; done <<<"$mounts"
  fi
  if findmnt -rn -o TARGET | grep -qF "$root/"; then
    echo "debian_package_fresh_root_test: $root still has mounts: left in place" >&2
  else
    rm -rf --one-file-system "$work"
  fi
  return "$status"
}
trap clean_up EXIT

# in_root COMMAND...: COMMAND chrooted in the root, with /proc and /dev, in a mount namespace
# of its own (private: nothing reaches this machine's mounts, and all goes when it exits).
in_root() {
  unshare --mount --propagation private -- sh -c '
    root=$1; shift
    mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" &&
      exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"' in_root "$root" "$@"
}

# --- the archive and the proxy, from this machine's apt settings ----------------------------
# The URIs of this machine's Debian sources (deb822 .sources, or one-line .list).
host_uris() {
  {
    sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | tr ' \t' '\n\n'
    grep -hE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed 's/\[[^]]*\]//' | awk '{print $2}'
  } | sed '/^$/d'
}
mirror=$(host_uris | grep -v -- '-security' | head -1 || true)
security=$(host_uris | grep -- '-security' | head -1 || true)
[ -n "$mirror" ] || { fail "no Debian archive in this machine's apt sources (/etc/apt/sources.list{,.d})"; finish; exit 1; }
echo "archive: $mirror${security:+; security: $security}"
# apt's proxy, if this machine has one, for debootstrap (http_proxy) and for apt in the root.
proxy_conf=$(apt-config dump | grep -E '^Acquire::(http|https|ftp)::Proxy ' || true)
http_proxy_setting=$(apt-config dump | sed -n 's/^Acquire::http::Proxy "\(.*\)";$/\1/p' | head -1)
proxy_env=()
if [ -n "${http_proxy:-}" ]; then proxy_env=("http_proxy=$http_proxy")
elif [ -n "$http_proxy_setting" ] && [ "$http_proxy_setting" != DIRECT ]; then proxy_env=("http_proxy=$http_proxy_setting"); fi
[ -z "${https_proxy:-}" ] || proxy_env+=("https_proxy=$https_proxy")

# --- the package, as debian_package_test.sh makes it ------------------------------------------
# FDL_BUILD_LOCK: a lock file that serialises packing with builds on a shared machine.
lock=()
[ -z "${FDL_BUILD_LOCK:-}" ] || lock=(flock "$FDL_BUILD_LOCK")
expect_status 0 "scripts/package" -- "${lock[@]}" env FDL_MIRROR_BUILD_DIR="$build" "$SOURCE_DIR/scripts/package" "$work/packages"
deb=$(grep '\.deb$' "$work/out" || true)
[ -n "$deb" ] && [ -f "$deb" ] || { fail "scripts/package made no .deb"; finish; exit 1; }
echo "Depends: $(dpkg-deb --field "$deb" Depends)"
echo "packed in $((SECONDS - started)) s"

# --- a fresh Debian 12 root ----------------------------------------------------------------------
mark=$SECONDS
expect_status 0 "debootstrap --variant=minbase bookworm" -- \
  unshare --mount --propagation private -- env "${proxy_env[@]}" \
  debootstrap --variant=minbase bookworm "$root" "$mirror"
[ -x "$root/usr/bin/apt-get" ] || { fail "debootstrap made no root: $(tail -5 "$work/err")"; finish; exit 1; }
echo "debootstrap: $((SECONDS - mark)) s, $(du -sm --one-file-system "$root" | cut -f1) MB"
# The archive as this machine has it: bookworm and its updates, and the security archive.
{
  echo "deb $mirror bookworm main"
  echo "deb $mirror bookworm-updates main"
  [ -z "$security" ] || echo "deb $security bookworm-security main"
} >"$root/etc/apt/sources.list"
[ -z "$proxy_conf" ] || echo "$proxy_conf" >"$root/etc/apt/apt.conf.d/01proxy"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/"

# --- apt install ./fdl-mirror_*.deb, resolving Depends: from the archive --------------------------
mark=$SECONDS
expect_status 0 "apt-get update in the root" -- in_root apt-get update -q
expect_status 0 "apt-get install ./$(basename "$deb") in the root" -- \
  in_root sh -c 'cd /tmp && apt-get install -y -q --no-install-recommends ./fdl-mirror_*.deb'
sed -n 's/^The following NEW packages will be installed:$/NEW:/p; /^  [a-z0-9]/p' "$work/out" | head -30
echo "apt: $((SECONDS - mark)) s"
status=$(in_root dpkg-query -W -f='${Status}' fdl-mirror 2>/dev/null || true)
[ "$status" = "install ok installed" ] && pass ||
  { fail "fdl-mirror is not installed in the root ('$status')"; finish; exit 1; }

# --- the program, its libraries, its user ------------------------------------------------------
expect_status 0 "fdl-mirror --version in the root" -- in_root /usr/bin/fdl-mirror --version
expect_output "libssh 0.12" "the installed fdl-mirror runs with its own libssh 0.12"
libdir=$(cd "$root/usr" && find lib -mindepth 1 -maxdepth 2 -type d -name fdl-mirror | head -1)
for elf in /usr/bin/fdl-mirror "/usr/$libdir/libssh.so.4" "/usr/$libdir/libduckdb.so"; do
  expect_status 0 "ldd $elf in the root" -- in_root ldd "$elf"
  if grep -q 'not found' "$work/out"; then
    fail "$elf has libraries the root lacks (a missing Depends:): $(grep 'not found' "$work/out" | tr -s ' \t' ' ')"
  else pass; fi
done
IFS=: read -r _ _ uid _ _ home shell < <(in_root getent passwd fdl-mirror) || true
[ -n "${uid:-}" ] && [ "$uid" -lt 1000 ] && [ "${home:-}" = /var/lib/fdl-mirror ] && pass ||
  fail "no system user fdl-mirror in the root ('${uid:-}' '${home:-}' '${shell:-}')"
got=$(in_root stat -c '%a %U:%G' /var/lib/fdl-mirror 2>/dev/null || echo missing)
[ "$got" = "750 fdl-mirror:fdl-mirror" ] && pass ||
  fail "/var/lib/fdl-mirror in the root is '$got', want 750 fdl-mirror:fdl-mirror"

# --- docs/operations.md's sequence: the example in place, its key file and CA where it names them
ssh-keygen -q -t ed25519 -N '' -C ops -f "$work/key"
echo "ops@example.org namespaces=\"fdl\" $(cut -d' ' -f1,2 "$work/key.pub")" \
  >"$root/etc/fdl-mirror/keys/population.allowed_signers"
mkdir -p "$root/etc/ssl"   # a minbase root has none (no openssl, no ca-certificates)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=test-ca -days 2 \
  -keyout "$work/ca.key" -out "$root/etc/ssl/internal-ca.pem" 2>/dev/null
expect_status 0 "install of the example as /etc/fdl-mirror/config.yaml in the root" -- \
  in_root install -m 0640 -g fdl-mirror /usr/share/doc/fdl-mirror/config.example.yaml /etc/fdl-mirror/config.yaml
expect_status 0 "check-config of the installed example in the root" -- \
  in_root /usr/bin/fdl-mirror check-config --config /etc/fdl-mirror/config.yaml
expect_output "credentials_file: /run/credentials/fdl-mirror.service/s3: does not exist now" \
  "the credential systemd makes at start noted"

echo "fresh root test: $((SECONDS - started)) s in all"
finish
