#!/usr/bin/env bash
# Folder-to-folder benchmark (issue: one-shot mirroring between folders).
# Builds a synthetic repository (30 versions sharing 4,000 data files of 16 KiB and
# 4 files of 256 MiB), then mirrors it with fdl-mirror, `rsync -a`, `rsync -a --fsync`
# (rsync made as durable as fdl-mirror, which fsyncs every file) and `cp -r`, interleaved
# round by round in this one run, into fresh destinations (tmpfs by default). Prints each
# tool's median wall time, fdl-mirror's ratio to each peer, its peak RSS, and the time of a
# rerun against the unchanged origin.
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

# One untimed copy first: the first writes to a fresh tmpfs pay for its memory, and
# whichever tool ran first would carry that cost.
cp -r "$bench_dir/origin" "$bench_dir/dest" && rm -rf "$bench_dir/dest"

for round in $(seq "$rounds"); do
  # Rotate who goes first, so no tool always follows the same one.
  case $((round % 4)) in
    1) order="fdl-mirror rsync rsync-fsync cp" ;;
    2) order="rsync rsync-fsync cp fdl-mirror" ;;
    3) order="rsync-fsync cp fdl-mirror rsync" ;;
    0) order="cp fdl-mirror rsync rsync-fsync" ;;
  esac
  for tool in $order; do
    case $tool in
      fdl-mirror) run_timed fdl-mirror "$fdl_mirror" sync "$bench_dir/origin" "$bench_dir/dest" --signatures off ;;
      rsync) run_timed rsync rsync -a "$bench_dir/origin/" "$bench_dir/dest/" ;;
      rsync-fsync) run_timed rsync-fsync rsync -a --fsync "$bench_dir/origin/" "$bench_dir/dest/" ;;
      cp) run_timed cp cp -r "$bench_dir/origin" "$bench_dir/dest" ;;
    esac
  done
  echo "round $round: fdl-mirror $(cut -d' ' -f1 "$bench_dir/fdl-mirror.last") s, rsync -a $(cut -d' ' -f1 "$bench_dir/rsync.last") s, rsync -a --fsync $(cut -d' ' -f1 "$bench_dir/rsync-fsync.last") s, cp -r $(cut -d' ' -f1 "$bench_dir/cp.last") s"
done

# A rerun against the unchanged origin: what a poll costs when nothing changed.
"$fdl_mirror" sync "$bench_dir/origin" "$bench_dir/dest" --signatures off >/dev/null
/usr/bin/time -f "%e %M" -o "$bench_dir/rerun.last" "$fdl_mirror" sync "$bench_dir/origin" "$bench_dir/dest" --signatures off >/dev/null

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
fdl=$(cut -d' ' -f1 "$bench_dir/fdl-mirror.times" | median)
rs=$(cut -d' ' -f1 "$bench_dir/rsync.times" | median)
rsf=$(cut -d' ' -f1 "$bench_dir/rsync-fsync.times" | median)
cpt=$(cut -d' ' -f1 "$bench_dir/cp.times" | median)
rss=$(cut -d' ' -f2 "$bench_dir/fdl-mirror.times" | sort -n | tail -1)
echo
printf 'median wall time over %s rounds: fdl-mirror %.2f s, rsync -a %.2f s, rsync -a --fsync %.2f s, cp -r %.2f s\n' "$rounds" "$fdl" "$rs" "$rsf" "$cpt"
awk -v f="$fdl" -v r="$rs" -v rf="$rsf" -v c="$cpt" 'BEGIN {printf "fdl-mirror / rsync -a = %.2f (target: <= 1.00), / rsync -a --fsync = %.2f, / cp -r = %.2f\n", f/r, f/rf, f/c}'
awk -v k="$rss" 'BEGIN {printf "fdl-mirror peak RSS: %.1f MiB (target: < 64 MiB)\n", k/1024}'
read -r rerun_s rerun_kib <"$bench_dir/rerun.last"
awk -v s="$rerun_s" -v k="$rerun_kib" 'BEGIN {printf "rerun against the unchanged origin: %.2f s, peak RSS %.1f MiB\n", s, k/1024}'
