# Setup steps shared by scripts/setup and scripts/test. Each is idempotent.

build_dir=${FDL_MIRROR_BUILD_DIR:-build}

log_step() { printf '==> %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Installs the named Debian packages that are not installed yet; runs apt-get update only
# when something is missing, so a machine that has everything does no network work.
install_debian_packages() {
  local missing=()
  local pkg
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
      missing+=("$pkg")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log_step "Debian packages: all ${#} present"
    return 0
  fi
  log_step "Debian packages: installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Configures (once) and builds the project with Ninja in $build_dir.
build_project() {
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    log_step "configuring in $build_dir"
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  log_step "building"
  # Two cores: two compile jobs; the link steps are small.
  cmake --build "$build_dir" -j 2
}

# libssh >= 0.12 (the first release with sshsig_verify). Debian 12 ships 0.10, so when the
# system's libssh is older, build Debian's newer source package: fetched with apt-get
# source through a temporary apt configuration that adds the unstable suite's source index
# for that one command (the system's own apt sources are untouched), built without server,
# GSSAPI, examples and tests into $libssh_prefix inside the build tree.
libssh_prefix=${FDL_MIRROR_LIBSSH_PREFIX:-$PWD/$build_dir/deps/libssh}

install_libssh() {
  if pkg-config --atleast-version=0.12 libssh 2>/dev/null; then
    log_step "libssh: the system's $(pkg-config --modversion libssh) is recent enough"
    return 0
  fi
  if [ -f "$libssh_prefix/lib/cmake/libssh/libssh-config-version.cmake" ]; then
    log_step "libssh: built already in $libssh_prefix"
    return 0
  fi
  install_debian_packages dpkg-dev debian-archive-keyring
  local work
  work=$(mktemp -d)
  # The archive the system already uses for bookworm, read from its own sources.
  local archive
  archive=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$archive" ] || archive=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  if [ -z "$archive" ]; then
    echo "libssh: cannot find the system's Debian archive in its apt sources" >&2
    return 1
  fi
  mkdir -p "$work/lists/partial" "$work/parts" "$work/src"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $archive unstable main" >"$work/sources.list"
  local apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/parts"
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
    -o "APT::Sandbox::User=root")
  log_step "libssh: fetching Debian's libssh source package from the unstable suite"
  apt-get "${apt_opts[@]}" -qq update
  (cd "$work/src" && apt-get "${apt_opts[@]}" -qq source --download-only libssh)
  local dsc
  dsc=$(ls "$work"/src/libssh_*.dsc | head -n 1)
  (cd "$work/src" && dpkg-source --no-check -x "$(basename "$dsc")" libssh >/dev/null)
  log_step "libssh: building $(basename "$dsc" .dsc) into $libssh_prefix"
  cmake -S "$work/src/libssh" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$libssh_prefix" -DCMAKE_INSTALL_LIBDIR=lib \
    -DWITH_SERVER=OFF -DWITH_GSSAPI=OFF -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF \
    -DCLIENT_TESTING=OFF -DWITH_ZLIB=OFF -DWITH_PCAP=OFF >/dev/null
  cmake --build "$work/build" -j 2 >/dev/null
  cmake --install "$work/build" >/dev/null
  rm -rf "$work"
}

# DuckDB's C library. Debian has no package; libduckdb.so (full C API, Parquet and JSON
# built in) ships inside DuckDB's Node.js bindings on the npm registry. The version is
# pinned in scripts/deps/duckdb/package.json and its lock file (integrity, no addresses),
# installed with npm ci into $duckdb_prefix inside the build tree.
duckdb_prefix=${FDL_MIRROR_DUCKDB_PREFIX:-$PWD/$build_dir/deps/duckdb}

# Installs the npm package pinned in scripts/deps/NAME (package.json and a lock file with
# integrity hashes and no addresses) with npm ci into PREFIX, unless FILE is there and the
# installed lock file is the pinned one. WHAT names it in messages.
install_pinned_npm() {
  local name=$1 prefix=$2 file=$3 what=$4
  if [ -f "$file" ] && cmp -s "scripts/deps/$name/package-lock.json" "$prefix/package-lock.json"; then
    log_step "$what: installed already in $prefix"
    return 0
  fi
  command -v npm >/dev/null || install_debian_packages npm
  log_step "$what: installing the pinned version with npm into $prefix"
  mkdir -p "$prefix"
  cp "scripts/deps/$name/package.json" "scripts/deps/$name/package-lock.json" "$prefix/"
  (cd "$prefix" && npm ci --no-audit --no-fund --ignore-scripts --omit-lockfile-registry-resolved >/dev/null)
  [ -f "$file" ] || { echo "$what: $file is missing after npm ci" >&2; return 1; }
}

install_duckdb() {
  install_pinned_npm duckdb "$duckdb_prefix" \
    "$duckdb_prefix/node_modules/@duckdb/node-bindings-linux-x64/libduckdb.so" "DuckDB's C library"
}

# s3rver, a small S3-compatible server in Node.js that keeps objects in a folder, for the S3
# store tests (tests/support/s3rver.hpp runs it on 127.0.0.1). Pinned like DuckDB: the
# version and its dependencies' integrity hashes in scripts/deps/s3rver/package.json and its
# lock file (no addresses), installed with npm ci into $s3rver_prefix inside the build tree.
s3rver_prefix=${FDL_MIRROR_S3RVER_PREFIX:-$PWD/$build_dir/deps/s3rver}

install_s3rver() {
  install_pinned_npm s3rver "$s3rver_prefix" "$s3rver_prefix/node_modules/s3rver/bin/s3rver.js" "s3rver"
  # s3rver 3.7.1 answers a PUT when the request's body has ended, before its bytes reach
  # the file, so a GET straight after can read a short object: the patch answers once the
  # file is closed (docs/design.md, "s3rver"). Applied once; npm ci puts the original back.
  local store="$s3rver_prefix/node_modules/s3rver/lib/stores/filesystem.js"
  if ! grep -q "fdl-mirror: answer only once" "$store"; then
    command -v patch >/dev/null || install_debian_packages patch
    log_step "s3rver: patching PUT to answer after its bytes are written"
    patch -s -d "$s3rver_prefix/node_modules/s3rver" -p1 <scripts/deps/s3rver/put-answers-after-bytes.patch
  fi
}

# promtool, which checks and unit-tests the Prometheus alert rules (systemd/fdl-mirror.rules.yml),
# and the Prometheus server, which the system tests run (a TLS scrape with basic
# authentication, alerts seen firing). Debian 12 ships both in the package prometheus, whose
# maintainer scripts would create a user and start a Prometheus server (through its init
# script when systemd is not running): so the package is only downloaded with apt-get and the
# two programs are unpacked into $promtool_dir and $prometheus_dir inside the build tree. A
# promtool or prometheus already on PATH is used as it is.
promtool_dir=${FDL_MIRROR_PROMTOOL_DIR:-$PWD/$build_dir/deps/promtool}
prometheus_dir=${FDL_MIRROR_PROMETHEUS_DIR:-$PWD/$build_dir/deps/prometheus}

# download_debian_package PACKAGE FOLDER: the package's files unpacked under FOLDER/root,
# nothing installed.
download_debian_package() {
  local package=$1 work=$2
  # apt-get download needs the package lists, which a fresh container lacks.
  if ! (cd "$work" && apt-get -o APT::Sandbox::User=root -qq download "$package" 2>/dev/null); then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    (cd "$work" && apt-get -o APT::Sandbox::User=root -qq download "$package")
  fi
  dpkg-deb -x "$work/${package}"_*.deb "$work/root"
}

install_promtool() {
  local have_promtool=no have_prometheus=no work
  if command -v promtool >/dev/null; then
    log_step "promtool: $(command -v promtool) is installed"
    have_promtool=yes
  elif [ -x "$promtool_dir/promtool" ]; then
    log_step "promtool: unpacked already in $promtool_dir"
    have_promtool=yes
  fi
  if command -v prometheus >/dev/null; then
    log_step "prometheus: $(command -v prometheus) is installed"
    have_prometheus=yes
  elif [ -x "$prometheus_dir/prometheus" ]; then
    log_step "prometheus: unpacked already in $prometheus_dir"
    have_prometheus=yes
  fi
  [ "$have_promtool$have_prometheus" != yesyes ] || return 0
  work=$(mktemp -d)
  log_step "promtool and prometheus: unpacking them from Debian's package prometheus into $build_dir/deps"
  download_debian_package prometheus "$work"
  if [ "$have_promtool" = no ]; then
    mkdir -p "$promtool_dir"
    cp "$work/root/usr/bin/promtool" "$promtool_dir/promtool"
    "$promtool_dir/promtool" --version >/dev/null
  fi
  if [ "$have_prometheus" = no ]; then
    mkdir -p "$prometheus_dir"
    cp "$work/root/usr/bin/prometheus" "$prometheus_dir/prometheus"
    "$prometheus_dir/prometheus" --version >/dev/null 2>&1
  fi
  rm -rf "$work"
}

# Alertmanager and amtool, for the test of the shipped inhibition rules
# (tests/system/alertmanager_inhibit_test.sh), unpacked from Debian's package
# prometheus-alertmanager into build/deps/alertmanager when not installed.
alertmanager_dir=${FDL_MIRROR_ALERTMANAGER_DIR:-$PWD/$build_dir/deps/alertmanager}
install_alertmanager() {
  if command -v amtool >/dev/null && command -v prometheus-alertmanager >/dev/null; then
    log_step "alertmanager: $(command -v prometheus-alertmanager) is installed"
    return 0
  fi
  if [ -x "$alertmanager_dir/amtool" ] && [ -x "$alertmanager_dir/alertmanager" ] &&
    [ -f "$alertmanager_dir/templates/default.tmpl" ]; then
    log_step "alertmanager: unpacked already in $alertmanager_dir"
    return 0
  fi
  local work
  work=$(mktemp -d)
  log_step "alertmanager: unpacking it from Debian's package prometheus-alertmanager into $alertmanager_dir"
  download_debian_package prometheus-alertmanager "$work"
  mkdir -p "$alertmanager_dir"
  cp "$work/root/usr/bin/prometheus-alertmanager" "$alertmanager_dir/alertmanager"
  cp "$work/root/usr/bin/amtool" "$alertmanager_dir/amtool"
  # Its default templates, which Debian's build reads from /usr/share/prometheus/alertmanager:
  # the test gives them to it there in a mount namespace of its own.
  mkdir -p "$alertmanager_dir/templates"
  cp "$work"/root/usr/share/prometheus/alertmanager/*.tmpl "$alertmanager_dir/templates/"
  rm -rf "$work"
  "$alertmanager_dir/amtool" --version >/dev/null 2>&1
}
