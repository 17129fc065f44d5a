# `verify --version ID` (issue 33, section 3): the on-call re-verifies one version on demand,
# with the daemon's configuration, without auditing every version the refs reach. A problem
# in another version does not touch it; a version that is not there is its problem; an id
# that is not a version id is a usage error.
source "$(dirname "$0")/lib.sh"

origin=$work/origin
mirror=$work/mirror
"$FDL_PUBLISHER" sample "$origin" >/dev/null
expect_status 0 "sync the sample" -- "$FDL_MIRROR" sync "$origin" "$mirror"
cat >"$work/mirror.yaml" <<YAML
state_dir: $work/state
defaults: { signatures: off }
repositories:
  - { name: population, origin: $origin, mirror: $mirror }
YAML
main=$(tr -d '\n' <"$mirror/refs/heads/main")
tag=$(tr -d '\n' <"$mirror/refs/tags/v1")

# Another version's catalog damaged in the mirror: the whole audit fails, one version's does not.
printf 'x' >>"$mirror/versions/$tag/ducklake.duckdb"
expect_status 1 "verify of the whole mirror sees the damage" -- \
  "$FDL_MIRROR" verify --config "$work/mirror.yaml" --repository population
expect_status 0 "verify --version of an undamaged version" -- \
  "$FDL_MIRROR" verify --config "$work/mirror.yaml" --repository population --version "$main" --json
python3 - "$work/out" "$main" <<'PY' && pass || fail "the report is not of that one version: $(head -c 600 "$work/out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert [v["id"] for v in r["versions"]] == [sys.argv[2]], [v["id"] for v in r["versions"]]
assert "refs/heads/main" in r["versions"][0]["reached_from"], r["versions"][0]
PY
expect_status 1 "verify --version of the damaged version" -- \
  "$FDL_MIRROR" verify --config "$work/mirror.yaml" --repository population --version "$tag"
expect_output "ducklake.duckdb" "names the damaged file"
expect_status 1 "verify --version of a version the mirror lacks" -- \
  "$FDL_MIRROR" verify "$mirror" --version 01a0a0a0-0000-7000-8000-000000000000
expect_output "01a0a0a0-0000-7000-8000-000000000000" "names the missing version"
expect_status 2 "verify --version with no version id" -- "$FDL_MIRROR" verify "$mirror" --version latest
expect_output "--version: 'latest' is not a lower-case UUIDv7 version id" "says why"
finish
