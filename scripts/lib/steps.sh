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
  if [ ! -f "$build_dir/build.ninja" ]; then
    log_step "configuring in $build_dir"
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  log_step "building"
  # Two cores: two compile jobs; the link steps are small.
  cmake --build "$build_dir" -j 2
}
