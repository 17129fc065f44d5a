#!/usr/bin/env bash
# Scale benchmark (issue 16): the daemon's memory and threads as the number of
# repositories grows, and one sync's as a repository grows. Prints each figure beside its
# target.
#
#   bench/scale_bench.sh [SCENARIO...]     (default: many steady; needs a build)
#
# Scenarios:
#   many    REPOS (60) folder repositories of 10 versions and 200 data files of 4 KiB,
#           mirrored to folders by one daemon: the first passes' peak RSS, peak threads and
#           time until every repository has completed a pass.
#   steady  STEADY_REPOS (500) small repositories, all in sync: RSS and CPU of the idle
#           daemon over STEADY_SECONDS (60) between passes.
#   big     one repository of BIG_VERSIONS (2000) versions with BIG_FILES_PER_VERSION (50)
#           data files each of its own: first sync, an unchanged quick pass, a full
#           recheck, verify and verify --json, each with its time and peak RSS, and a
#           daemon life on the mirror (its pass, a scrub step and the origin check); then
#           the same at half the size, to show how each grows.
#   s3      a repository of 3 versions sharing 4 data files of 256 MiB (S3_LARGE_BYTES),
#           synced at --concurrency 16 from a folder into Ceph RGW, then from that RGW
#           bucket into another: wall time and peak RSS at sync's default memory limit
#           (48MiB: parts of 5 MiB), at the daemon's (256MiB: 16 MiB) and at 64MiB (8 MiB) (S3_LIMITS;
#           scripts/deps/rgw/start-rgw.sh; objects in memory).
#   verify  the network benchmark's repository (30 versions, 4,000 data files of 16 KiB and
#           2 of 64 MiB) mirrored into a folder and into Ceph RGW: `verify` of each at
#           --concurrency 16, side by side (target: RGW at most 3 x the folder).
#
# Environment: FDL_MIRROR_BUILD_DIR (build), FDL_MIRROR (the binary to measure; default:
# the build's, to set another build beside it), BENCH_DIR (/dev/shm/fdl-mirror-scale),
# MAX_PASSES, THREADS and READERS (the daemon's max_passes, threads and catalogs.readers;
# unset: its defaults); ALLOCATORS (default: glibc), the allocators to run every scenario
# under, side by side: glibc (the default), glibc-tuned (MALLOC_ARENA_MAX=2 and a fixed
# mmap threshold of 256 KiB, as mallopt would set them) and mimalloc (Debian's
# libmimalloc2.0 through LD_PRELOAD; skipped with a note when it is not installed).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FDL_MIRROR_BUILD_DIR:-build}
fdl_mirror=${FDL_MIRROR:-$PWD/$build/fdl-mirror}
publisher=$PWD/$build/fdl-test-publisher
bench_dir=${BENCH_DIR:-/dev/shm/fdl-mirror-scale}
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(many steady)

rm -rf "$bench_dir"
mkdir -p "$bench_dir"
daemon_pid=
cleanup() {
  [ -z "$daemon_pid" ] || kill "$daemon_pid" 2>/dev/null || true
  [ ! -x "$bench_dir/rgw/stop-rgw.sh" ] || "$bench_dir/rgw/stop-rgw.sh" >/dev/null 2>&1 || true
  rm -rf "$bench_dir"
}
trap cleanup EXIT

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

mimalloc_library=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2
# alloc: the env prefix that runs a command under the current allocator ($allocator).
alloc=(env)
use_allocator() {
  allocator=$1
  case $1 in
    glibc) alloc=(env) ;;
    glibc-tuned) alloc=(env MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=262144) ;;
    mimalloc)
      [ -e "$mimalloc_library" ] || { echo "mimalloc: $mimalloc_library is not installed (apt-get install libmimalloc2.0)"; return 1; }
      alloc=(env LD_PRELOAD=$mimalloc_library) ;;
    *) echo "unknown allocator: $1 (glibc, glibc-tuned, mimalloc)" >&2; exit 2 ;;
  esac
}

# config_for N ORIGIN_TEMPLATE: copies ORIGIN_TEMPLATE to N origins, writes a daemon
# configuration mirroring each into its own folder, prints the configuration's path.
config_for() {
  local n=$1 template=$2 dir=$bench_dir/fleet i
  rm -rf "$dir"
  mkdir -p "$dir/origins" "$dir/mirrors"
  {
    echo "listen: 127.0.0.1:0"
    echo "state_dir: $dir/state"
    [ -z "${MAX_PASSES:-}" ] || echo "max_passes: $MAX_PASSES"
    [ -z "${THREADS:-}" ] || echo "threads: $THREADS"
    [ -z "${READERS:-}" ] || echo "catalogs: { readers: $READERS }"
    echo "defaults: { interval: 1h, signatures: off }"
    echo "repositories:"
    for i in $(seq "$n"); do
      cp -r "$template" "$dir/origins/r$i"
      echo "  - { name: r$i, origin: $dir/origins/r$i, mirror: $dir/mirrors/r$i }"
    done
  } >"$dir/config.yaml"
  echo "$dir/config.yaml"
}

# start_daemon CONFIG: runs the daemon in the background; sets daemon_pid and metrics_url.
start_daemon() {
  "${alloc[@]}" "$fdl_mirror" run --config "$1" 2>"$bench_dir/daemon.log" &
  daemon_pid=$!
  local port= tries=0
  until [ -n "$port" ]; do
    port=$(grep -m1 -o 'listening on 127\.0\.0\.1:[0-9]*' "$bench_dir/daemon.log" 2>/dev/null | sed 's/.*://' || true)
    tries=$((tries + 1))
    [ "$tries" -lt 400 ] || { echo "the daemon did not start:" >&2; cat "$bench_dir/daemon.log" >&2; exit 1; }
    sleep 0.05
  done
  metrics_url=http://127.0.0.1:$port/metrics
}

stop_daemon() {
  kill "$daemon_pid"
  wait "$daemon_pid" || true
  daemon_pid=
}

# passed_repositories: how many repositories have completed a pass.
passed_repositories() {
  curl -sf "$metrics_url" | grep -c '^fdl_mirror_last_success_timestamp_seconds{.*} [1-9]' || true
}

proc_field() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$daemon_pid/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$daemon_pid/stat"; }

scenario_many() {
  local repos=${REPOS:-60}
  echo "== many: $repos repositories of 10 versions x 200 files of 4 KiB, first passes"
  "$publisher" bench "$bench_dir/template" 10 200 4096 0 0
  local config
  config=$(config_for "$repos" "$bench_dir/template")
  local start=$EPOCHREALTIME peak_threads=0 threads passed=0
  start_daemon "$config"
  while [ "$passed" -lt "$repos" ]; do
    threads=$(proc_field Threads)
    [ "$threads" -le "$peak_threads" ] || peak_threads=$threads
    passed=$(passed_repositories)
    sleep 0.05
  done
  local took peak cpu
  took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  peak=$(proc_field VmHWM)
  cpu=$(awk -v t="$(cpu_ticks)" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }')
  stop_daemon
  echo "all $repos repositories passed in $took s (the daemon's CPU: $cpu s)"
  echo "peak RSS: $(mib "$peak") MiB (target: <= 160 MiB)"
  echo "peak threads: $peak_threads (target: <= the configured pool)"
}

scenario_steady() {
  local repos=${STEADY_REPOS:-500} seconds=${STEADY_SECONDS:-60}
  echo "== steady: $repos small repositories in sync, $seconds s between passes"
  "$publisher" bench "$bench_dir/template" 2 10 1024 0 0
  local config passed=0
  config=$(config_for "$repos" "$bench_dir/template")
  start_daemon "$config"
  while [ "$passed" -lt "$repos" ]; do
    sleep 1
    passed=$(passed_repositories)
  done
  local ticks_before ticks_after hz rss threads
  hz=$(getconf CLK_TCK)
  ticks_before=$(cpu_ticks)
  sleep "$seconds"
  ticks_after=$(cpu_ticks)
  rss=$(proc_field VmRSS)
  threads=$(proc_field Threads)
  stop_daemon
  echo "RSS in steady state: $(mib "$rss") MiB (target: <= 100 MiB); threads: $threads"
  awk -v t=$((ticks_after - ticks_before)) -v hz="$hz" -v s="$seconds" \
    'BEGIN { printf "CPU between passes: %.2f %% of a core (target: < 1 %%)\n", 100 * t / hz / s }'
}

# timed NAME COMMAND...: runs COMMAND, prints its wall time and peak RSS.
timed() {
  local name=$1
  shift
  if ! /usr/bin/time -f "%e %U %S %M" -o "$bench_dir/timed" "${alloc[@]}" "$@" >"$bench_dir/timed.out" 2>&1; then
    echo "  $name: FAILED ($(tail -1 "$bench_dir/timed"))" >&2
    tail -5 "$bench_dir/timed.out" >&2
    exit 1
  fi
  local k user sys
  read -r s user sys k <"$bench_dir/timed" # s: the seconds, kept for the caller
  printf '  %-28s %7.2f s  CPU %6.2f s  peak RSS %6.1f MiB\n' "$name" "$s" "$(awk -v u="$user" -v y="$sys" 'BEGIN { print u + y }')" "$(mib "$k")"
}

big_round() {
  local versions=$1 per_version=$2 origin=$bench_dir/big-origin mirror=$bench_dir/big-mirror
  rm -rf "$origin" "$mirror"
  "$publisher" bench-spread "$origin" "$versions" "$per_version" 1024
  echo "$versions versions, $((versions * per_version)) data files of 1 KiB:"
  timed "first sync" "$fdl_mirror" sync "$origin" "$mirror" --signatures off
  timed "unchanged, quick" "$fdl_mirror" sync "$origin" "$mirror" --signatures off --quick
  timed "unchanged, full recheck" "$fdl_mirror" sync "$origin" "$mirror" --signatures off
  timed "verify of the mirror" "$fdl_mirror" verify "$mirror" --signatures off
  timed "verify --json" "$fdl_mirror" verify "$mirror" --signatures off --json
  audited_life "$origin" "$mirror"
  rm -rf "$origin" "$mirror"
}

# audited_life ORIGIN MIRROR: a daemon life on the synced mirror: its pass, then the
# scheduled audits that walk the whole ledger (a scrub step at the default 1h / 30d and
# the origin check); prints the time until the origin check is done and the peak RSS.
audited_life() {
  local config=$bench_dir/audited.yaml start
  cat >"$config" <<YAML
listen: 127.0.0.1:0
state_dir: $bench_dir/audited-state
log: { level: debug }
defaults: { interval: 1h, signatures: off, origin_check_interval: 1h }
repositories:
  - { name: big, origin: $1, mirror: $2 }
YAML
  start=$EPOCHREALTIME
  start_daemon "$config"
  local tries=0
  until grep -q 'origin check: [0-9]* data file' "$bench_dir/daemon.log"; do
    tries=$((tries + 1))
    [ "$tries" -lt 6000 ] || { echo "the daemon's audits did not finish:" >&2; tail -5 "$bench_dir/daemon.log" >&2; exit 1; }
    sleep 0.05
  done
  local took peak scrubbed
  took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
  peak=$(proc_field VmHWM)
  scrubbed=$(grep -o 'scrub step: [0-9]* data file' "$bench_dir/daemon.log" | grep -o '[0-9]*' | head -1)
  stop_daemon
  rm -rf "$bench_dir/audited-state"
  printf '  %-28s %7.2f s  peak RSS %6.1f MiB  (scrub step: %s files; origin check: every file)\n' \
    "daemon: pass and audits" "$took" "$(mib "$peak")" "${scrubbed:-?}"
}

scenario_big() {
  local versions=${BIG_VERSIONS:-2000} per_version=${BIG_FILES_PER_VERSION:-50}
  echo "== big: one repository, at half size then full size"
  big_round $((versions / 2)) "$per_version"
  big_round "$versions" "$per_version"
}

# start_rgw: starts Ceph RGW with a bucket "s3bench"; sets s3 (the environment that
# reaches it, as an env command prefix).
start_rgw() {
  local printed endpoint key secret
  printed=$(BASE="$bench_dir/rgw" bash scripts/deps/rgw/start-rgw.sh 2>"$bench_dir/rgw-start.log") ||
    { echo "Ceph RGW did not start:" >&2; tail -5 "$bench_dir/rgw-start.log" >&2; exit 3; }
  endpoint=$(sed -n 's/^S3_ENDPOINT=//p' <<<"$printed")
  key=$(sed -n 's/^S3_ACCESS_KEY=//p' <<<"$printed")
  secret=$(sed -n 's/^S3_SECRET_KEY=//p' <<<"$printed")
  : >"$bench_dir/aws-empty"
  s3=(env -u AWS_CA_BUNDLE -u AWS_PROFILE -u AWS_SESSION_TOKEN AWS_ACCESS_KEY_ID=$key
    AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1 AWS_CONFIG_FILE=$bench_dir/aws-empty
    AWS_SHARED_CREDENTIALS_FILE=$bench_dir/aws-empty AWS_ENDPOINT_URL=$endpoint)
  "${s3[@]}" aws --endpoint-url "$endpoint" s3 mb s3://s3bench >/dev/null
}

scenario_verify() {
  echo "== verify: 30 versions, 4,000 x 16 KiB + 2 x 64 MiB, --concurrency 16, folder and Ceph RGW"
  start_rgw
  "$publisher" bench "$bench_dir/v-origin" 30 4000 16384 2 67108864
  "$fdl_mirror" sync "$bench_dir/v-origin" "$bench_dir/v-mirror" --signatures off --concurrency 16 >/dev/null
  "${s3[@]}" "$fdl_mirror" sync "$bench_dir/v-origin" s3://s3bench/v-mirror/ --allow-plain-http --signatures off \
    --concurrency 16 >/dev/null
  timed "verify of the folder mirror" "$fdl_mirror" verify "$bench_dir/v-mirror" --signatures off --concurrency 16
  local folder_s=$s
  timed "verify of the RGW mirror" "${s3[@]}" "$fdl_mirror" verify s3://s3bench/v-mirror/ --allow-plain-http \
    --signatures off --concurrency 16
  awk -v r="$s" -v f="$folder_s" 'BEGIN { printf "RGW / folder = %.2f (target: <= 3)\n", r / f }'
  timed "verify of the RGW mirror, 64" "${s3[@]}" "$fdl_mirror" verify s3://s3bench/v-mirror/ --allow-plain-http \
    --signatures off --concurrency 64
  "$bench_dir/rgw/stop-rgw.sh" >/dev/null 2>&1 || true
}

scenario_s3() {
  local large=${S3_LARGE_BYTES:-268435456}
  echo "== s3: 3 versions sharing 4 data files of $((large >> 20)) MiB, --concurrency 16"
  "$publisher" bench "$bench_dir/s3-origin" 3 10 16384 4 "$large"
  local run=0 limit
  for limit in ${S3_LIMITS:-48MiB 256MiB 64MiB}; do
    # A fresh RGW for each limit: it keeps objects in a memory store of 4 GiB, and frees
    # deleted ones only in its garbage collection, hours later.
    rm -rf "$bench_dir/rgw"
    start_rgw
    run=$((run + 1))
    timed "folder -> RGW, memory $limit" "${s3[@]}" "$fdl_mirror" sync "$bench_dir/s3-origin" \
      "s3://s3bench/folder$run/" --allow-plain-http --signatures off --concurrency 16 --memory-limit "$limit"
    timed "RGW -> RGW, memory $limit" "${s3[@]}" "$fdl_mirror" sync "s3://s3bench/folder$run/" \
      "s3://s3bench/copy$run/" --allow-plain-http --signatures off --concurrency 16 --memory-limit "$limit"
    "$bench_dir/rgw/stop-rgw.sh" >/dev/null 2>&1 || true
  done
  echo "target: peak RSS <= 96 MiB at --concurrency 16"
}

echo "fdl-mirror scale benchmark on $(nproc) cores, $(date -u +%Y-%m-%d)"
for scenario in "${scenarios[@]}"; do
  for allocator in ${ALLOCATORS:-glibc}; do
    use_allocator "$allocator" || continue
    echo "-- allocator: $allocator"
    find "$bench_dir" -mindepth 1 -delete # each run starts from nothing
    case $scenario in
      many) scenario_many ;;
      steady) scenario_steady ;;
      big) scenario_big ;;
      s3) scenario_s3 ;;
      verify) scenario_verify ;;
      *) echo "unknown scenario: $scenario (many, steady, big, s3, verify)" >&2; exit 2 ;;
    esac
  done
done
