# One hostile repository never stops the daemon (issue 31): a daemon mirrors a good
# repository and one whose newest catalog crashes DuckDB (tests/data/hostile-catalogs,
# made by the checksum-recomputing mutator). The daemon stays up, the good repository is
# mirrored and keeps being mirrored, the hostile version is held with
# catalog.reader_crashed, the reader failure is counted, and the hostile repository's
# other versions are published. verify and sync of it exit 1, naming the reason, never 139.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

inputs=$(cd "$(dirname "$0")/../data/hostile-catalogs" && pwd)
tar -xzf "$inputs/base-sample-repo.tar.gz" -C "$work"      # $work/repo: 4 versions
hostile=$work/repo
victim=01a24333-9dfb-7cad-a53c-5f70b6a69339               # seq 4, branch dev
v=$hostile/versions/$victim
base_sum=$(sha256sum "$v/ducklake.duckdb" | cut -d' ' -f1)
gunzip -c "$inputs/crash-segv-144.duckdb.gz" >"$v/ducklake.duckdb"
sum=$(sha256sum "$v/ducklake.duckdb" | cut -d' ' -f1)
sed -i "s/\"sha256\":\"$base_sum\"/\"sha256\":\"$sum\"/" "$v/version.json"
grep -q "$sum" "$v/version.json" && pass || fail "the hostile catalog is not pinned by its version.json"

# The commands first: held, exit 1, never a crash.
expect_status 1 "verify of the hostile repository" -- "$FDL_MIRROR" verify "$hostile"
expect_output "catalog reader crashed" "verify names the crashed reader"
expect_status 1 "sync of the hostile repository" -- "$FDL_MIRROR" sync "$hostile" "$work/m-sync" --json
python3 - "$work/out" "$victim" <<'PY' && pass || fail "sync --json holds the hostile version with catalog.reader_crashed"
import json, sys
report = json.load(open(sys.argv[1]))
held = {h["version"]: h for h in report["held"]}
assert held[sys.argv[2]]["kind"] == "catalog.reader_crashed", held
assert len(report["published"]) == 3, report["published"]
PY

good=$work/good
"$FDL_PUBLISHER" sample "$good"
cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
shutdown_timeout: 5s
defaults: { interval: 1s, jitter: 0%, signatures: off }
repositories:
  - name: hostile
    origin: $hostile
    mirror: $work/mirror-hostile
  - name: good
    origin: $good
    mirror: $work/mirror-good
YAML

start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_versions_held{repo="hostile",reason="catalog.reader_crashed"}' == 1 60 \
  "the hostile version held: its reader crashed"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="good",ref="refs/heads/main"}' == 1 60 "the good repository mirrored"
expect_metric 'fdl_mirror_ref_in_sync{repo="hostile",ref="refs/heads/main"}' == 1 "the hostile repository's main mirrored"
expect_metric 'fdl_mirror_ref_in_sync{repo="hostile",ref="refs/heads/dev"}' == 0 "its dev, whose tip crashes, is not"
expect_metric 'fdl_mirror_catalog_reader_failures_total{kind="crashed"}' '>=' 1 "the crash counted"
[ ! -e "$work/mirror-hostile/versions/$victim/version.json" ] && pass || fail "the hostile version was published"

# Passes go on, both repositories' alike, and the daemon is the one that started.
good_passes=$(metric 'fdl_mirror_passes_total{repo="good",result="ok"}')
wait_for_metric 'fdl_mirror_passes_total{repo="good",result="ok"}' '>=' "$((good_passes + 3))" 30 \
  "the good repository keeps passing"
wait_for_metric 'fdl_mirror_catalog_reader_failures_total{kind="crashed"}' '>=' 2 30 "each pass's crash counted"
running "$daemon_pid" && pass || fail "the daemon died"
stage "$good"
added=$("$FDL_PUBLISHER" add "$work/stage" main 1000)
install_staged "$good"
wait_until 30 "a new good version mirrored" '[ "$(ref_of "$work/mirror-good" refs/heads/main)" = "$added" ]'
[ "$(log_lines_with 0 "catalog reader crashed" "$victim")" -ge 1 ] && pass || fail "the log does not say why"
stop_daemon
expect_clean_exit
finish
