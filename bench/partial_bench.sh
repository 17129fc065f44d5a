#!/usr/bin/env bash
# Partial mirrors' cost (issue 35): the folder benchmark's synthetic repository (30 versions
# on main sharing 4,000 data files of 16 KiB and 2 files of 64 MiB by default), with a tag
# on its 15th version. Side by side in this one run, each into a fresh folder: a full
# mirror, a mirror following that one tag (its line: 15 versions), that tag at depth 1 (the
# one version), and main at depth 1 and 3. Prints what each
# copied (versions, files, bytes), against what the followed versions themselves hold (their
# folders and the data files their files.json lists, each counted once), and its time.
#
#   bench/partial_bench.sh                (needs a build: scripts/setup)
#   BENCH_DIR=/path BENCH_LARGE_BYTES=... to change where and how big.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FDL_MIRROR_BUILD_DIR:-build}
fdl_mirror=$build/fdl-mirror
publisher=$build/fdl-test-publisher
bench_dir=${BENCH_DIR:-/dev/shm/fdl-mirror-partial-bench}
small_files=${BENCH_SMALL_FILES:-4000}
small_bytes=${BENCH_SMALL_BYTES:-16384}
large_files=${BENCH_LARGE_FILES:-2}
large_bytes=${BENCH_LARGE_BYTES:-67108864}
versions=${BENCH_VERSIONS:-30}
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3

rm -rf "$bench_dir"
mkdir -p "$bench_dir"
trap 'rm -rf "$bench_dir"' EXIT
origin=$bench_dir/origin
echo "building the origin: $versions versions, $small_files x $small_bytes B + $large_files x $large_bytes B in $bench_dir"
"$publisher" bench "$origin" "$versions" "$small_files" "$small_bytes" "$large_files" "$large_bytes" >/dev/null
# The tag, on the 15th version of main (refs.json lists it as the publisher would).
$python - "$origin" <<'PY'
import json, os, sys
root = sys.argv[1]
line, at = [], open(f"{root}/refs/heads/main").read().strip()
while at:
    line.append(at)
    parents = json.load(open(f"{root}/versions/{at}/version.json")).get("parents") or []
    at = parents[0] if parents else None
tagged = list(reversed(line))[14]
os.makedirs(f"{root}/refs/tags", exist_ok=True)
open(f"{root}/refs/tags/v15", "w").write(tagged + "\n")
refs = json.load(open(f"{root}/refs.json"))
refs["refs"]["refs/tags/v15"] = tagged
json.dump(refs, open(f"{root}/refs.json", "w"))
PY

# own_bytes ID...: files and bytes the versions hold themselves: their folders, and the data
# files their files.json lists (each path once).
own_bytes() {
  $python - "$origin" "$@" <<'PY'
import json, os, sys
root, ids = sys.argv[1], sys.argv[2:]
data_dir = json.load(open(f"{root}/fdl.json")).get("data_dir", "data/")
files, total, seen = 0, 0, set()
for v in ids:
    folder = f"{root}/versions/{v}"
    for name in os.listdir(folder):
        files += 1
        total += os.path.getsize(f"{folder}/{name}")
    for table in json.load(open(f"{folder}/files.json"))["tables"].values():
        for f in table["files"]:
            if f["path"] not in seen:
                seen.add(f["path"])
                files += 1
                total += os.path.getsize(os.path.join(root, data_dir, f["path"]))
print(files, total)
PY
}

# run NAME ARGS...: a sync into a fresh folder; prints what it copied and how long it took.
run() {
  local name=$1
  shift
  rm -rf "$bench_dir/dest"
  sync
  local start=$EPOCHREALTIME
  "$fdl_mirror" sync "$origin" "$bench_dir/dest" --signatures off --json "$@" >"$bench_dir/$name.json"
  local seconds
  seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
  $python - "$bench_dir/$name.json" "$name" "$seconds" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:<22} {r['versions_in_mirror']:>3} version(s) {r['files_copied']:>6} file(s) "
      f"{r['bytes_copied'] / 2**20:>9.1f} MiB copied in {float(sys.argv[3]):6.2f} s")
PY
}

tagged=$(cat "$origin/refs/tags/v15")
read -r tag_files tag_bytes < <(own_bytes "$tagged")
main_line=$($python - "$origin" <<'PY'
import json, sys
root, at = sys.argv[1], open(f"{sys.argv[1]}/refs/heads/main").read().strip()
while at:
    print(at)
    parents = json.load(open(f"{root}/versions/{at}/version.json")).get("parents") or []
    at = parents[0] if parents else None
PY
)
read -r newest_files newest_bytes < <(own_bytes $(sed -n 1p <<<"$main_line"))
read -r three_files three_bytes < <(own_bytes $(sed -n 1,3p <<<"$main_line"))
read -r all_files all_bytes < <(own_bytes $main_line)
echo
printf '%-22s %s\n' "followed" "what the mirror copied (and the fdl.json, refs, HEAD, refs.json and ledger it writes)"
run "full mirror"
run "tag v15 only" --ref refs/tags/v15 --head refs/tags/v15
run "tag v15, depth 1" --ref refs/tags/v15 --head refs/tags/v15 --depth 1
run "main, depth 1" --ref refs/heads/main --depth 1
run "main, depth 3" --ref refs/heads/main --depth 3
echo
awk -v f="$tag_files" -v b="$tag_bytes" 'BEGIN { printf "v15 holds itself:       %d file(s) %.1f MiB (its folder, its data files)\n", f, b / 1048576 }'
awk -v f="$newest_files" -v b="$newest_bytes" 'BEGIN { printf "main'"'"'s tip holds:       %d file(s) %.1f MiB\n", f, b / 1048576 }'
awk -v f="$three_files" -v b="$three_bytes" 'BEGIN { printf "main'"'"'s newest 3 hold:  %d file(s) %.1f MiB\n", f, b / 1048576 }'
awk -v f="$all_files" -v b="$all_bytes" 'BEGIN { printf "all 30 versions hold:   %d file(s) %.1f MiB\n", f, b / 1048576 }'
