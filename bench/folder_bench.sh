#!/usr/bin/env bash
# Folder-to-folder benchmark (issue: one-shot mirroring between folders).
# Builds a synthetic repository (30 versions sharing 4,000 data files of 16 KiB and
# 4 files of 256 MiB), then mirrors it with fdl-mirror, `rsync -a` and `cp -r`, interleaved
# round by round in this one run, into fresh destinations on tmpfs. Prints each tool's
# median wall time, fdl-mirror's ratio to each peer and its peak RSS.
#
#   bench/folder_bench.sh [ROUNDS]        (default 3; needs a build: scripts/setup)
#   BENCH_DIR=/path BENCH_LARGE_BYTES=... to change where and how big.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
build=${FDL_MIRROR_BUILD_DIR:-build}
fdl_mirror=$build/fdl-mirror
publisher=$build/fdl-test-publisher
bench_dir=${BENCH_DIR:-/dev/shm/fdl-mirror-bench}
small_files=${BENCH_SMALL_FILES:-4000}
small_bytes=${BENCH_SMALL_BYTES:-16384}
large_files=${BENCH_LARGE_FILES:-4}
large_bytes=${BENCH_LARGE_BYTES:-268435456}
versions=${BENCH_VERSIONS:-30}

rm -rf "$bench_dir"
mkdir -p "$bench_dir"
trap 'rm -rf "$bench_dir"' EXIT
echo "building the origin: $versions versions, $small_files x $small_bytes B + $large_files x $large_bytes B in $bench_dir"
"$publisher" bench "$bench_dir/origin" "$versions" "$small_files" "$small_bytes" "$large_files" "$large_bytes"
du -sh "$bench_dir/origin" | sed 's/^/origin size: /'

# run_timed NAME COMMAND...: appends "seconds peak_kib" to $bench_dir/NAME.times
run_timed() {
  local name=$1
  shift
  rm -rf "$bench_dir/dest"
  sync
  /usr/bin/time -f "%e %M" -o "$bench_dir/$name.last" "$@" >/dev/null
  cat "$bench_dir/$name.last" >>"$bench_dir/$name.times"
}

for round in $(seq "$rounds"); do
  run_timed fdl-mirror "$fdl_mirror" sync "$bench_dir/origin" "$bench_dir/dest" --signatures off
  run_timed rsync rsync -a "$bench_dir/origin/" "$bench_dir/dest/"
  run_timed cp cp -r "$bench_dir/origin" "$bench_dir/dest"
  echo "round $round: fdl-mirror $(cut -d' ' -f1 "$bench_dir/fdl-mirror.last") s, rsync $(cut -d' ' -f1 "$bench_dir/rsync.last") s, cp $(cut -d' ' -f1 "$bench_dir/cp.last") s"
done

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
fdl=$(cut -d' ' -f1 "$bench_dir/fdl-mirror.times" | median)
rs=$(cut -d' ' -f1 "$bench_dir/rsync.times" | median)
cpt=$(cut -d' ' -f1 "$bench_dir/cp.times" | median)
rss=$(cut -d' ' -f2 "$bench_dir/fdl-mirror.times" | sort -n | tail -1)
echo
printf 'median wall time over %s rounds: fdl-mirror %.2f s, rsync -a %.2f s, cp -r %.2f s\n' "$rounds" "$fdl" "$rs" "$cpt"
awk -v f="$fdl" -v r="$rs" -v c="$cpt" 'BEGIN {printf "fdl-mirror / rsync -a = %.2f, fdl-mirror / cp -r = %.2f (target: <= 1.00 against rsync)\n", f/r, f/c}'
awk -v k="$rss" 'BEGIN {printf "fdl-mirror peak RSS: %.1f MiB (target: < 64 MiB)\n", k/1024}'
