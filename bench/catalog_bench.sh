#!/usr/bin/env bash
# Catalog gate benchmark (issue 16): the time to read one frozen catalog as the gate reads
# it (attach, the check of its objects, its metadata rows, the checks in C++, detach),
# alone and in the batches the catalog readers take when several catalogs wait (up to 8),
# for a catalog of 4,000 data files and one of 200. Prints wall and CPU time per catalog
# beside the target (<= 10 ms for 4,000 files), then DuckDB's own floor for the same catalog
# (its C API alone, nothing of fdl-mirror): "attach" (ATTACH and DETACH), "rows" (and the
# gate's column selects of the eight metadata tables) and "listing" (and one
# duckdb_functions() listing, which the object check needs and a batch shares). Last, the
# same reads through the sandboxed reader process, as the gate does them since issue 31:
# "sandboxed-1" and "sandboxed-8" with a warm reader (CPU of both processes), and
# "new-reader" for a read that starts its reader (the first of each pass); the budget is
# at most 5 ms more per catalog than the in-process read.
#
#   bench/catalog_bench.sh [ROUNDS]     (default 10 rounds of 8 catalogs; needs a build)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
build=${FDL_MIRROR_BUILD_DIR:-build}
bench=$(realpath "$build/fdl-bench-catalog")
publisher=$(realpath "$build/fdl-test-publisher")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "fdl-mirror catalog gate benchmark on $(nproc) cores, $(date -u +%F)"
printf '%-12s %6s %16s %16s %10s\n' catalog batch "ms per catalog" "CPU ms" target
for files in 4000 200; do
  # One version of $files data files of 1 KiB: only its catalog is read.
  "$publisher" bench "$work/repo-$files" 1 "$files" 1024 0 0 >/dev/null
  catalog=$(find "$work/repo-$files/versions" -name '*.duckdb' | head -1)
  while read -r batch ms cpu; do
    target=""
    [ "$files" = 4000 ] && target="<= 10 ms"
    printf '%-12s %6s %16s %16s %10s\n' "$files files" "$batch" "$ms" "$cpu" "$target"
  done < <("$bench" "$catalog" "$rounds")
done
echo "(best of $rounds rounds of 8 reads per batch size, the sizes taking turns, after one round to warm up;"
echo " attach, rows and listing: DuckDB's floor per catalog, the same way;"
echo " sandboxed-N: through the sandboxed reader, warm; new-reader: a reader started for the read)"
