# Partial mirrors from each kind of origin (issue 35): a folder, HTTP (nginx) and S3
# (s3rver), with a 30-version main. For each: a tag-only mirror; depth 3 of main; that
# shallow mirror deepened to 10, then made shallower (nothing deleted); the patterns changed
# between passes (tags added, then main no longer followed); the origin's main moved past the
# window. `verify` of each mirror passes and says it is partial; a shallow one names the
# parents below its window as expected, not missing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

origin=$work/origin
"$FDL_PUBLISHER" sample "$origin" >/dev/null
for i in $(seq 27); do "$FDL_PUBLISHER" add "$origin" main 100 >/dev/null; done

start_nginx "$origin"
start_s3 origins
# The S3 origin is a copy of the folder, brought up to date before each pass.
publish_to_s3() {
  with_s3 "$FDL_MIRROR" sync "$origin" s3://origins/repo/ --allow-plain-http --signatures off >"$work/publish.out" 2>&1 ||
    fail "the S3 origin was not brought up to date: $(tail -n 3 "$work/publish.out")"
}

# main_line: the origin's main, newest first, by first parents.
main_line() {
  $python - "$origin" <<'PY'
import json, sys
root = sys.argv[1]
at = open(f"{root}/refs/heads/main").read().strip()
while at:
    print(at)
    parents = json.load(open(f"{root}/versions/{at}/version.json")).get("parents") or []
    at = parents[0] if parents else None
PY
}
held() { find "$1/versions" -name version.json 2>/dev/null | wc -l; }
refs_of() { (cd "$1" && find refs -type f | sort | tr '\n' ' '); }
# holds_newest MIRROR N: the newest N versions of the origin's main are all in MIRROR.
holds_newest() {
  local id missing=0
  for id in $(main_line | sed -n "1,$2p"); do [ -f "$1/versions/$id/version.json" ] || missing=$((missing + 1)); done
  [ "$missing" -eq 0 ]
}

# partial_sync KIND MIRROR ARGS...: a sync from the origin as KIND serves it.
partial_sync() {
  local kind=$1 mirror=$2
  shift 2
  case $kind in
    folder) "$FDL_MIRROR" sync "$origin" "$mirror" --signatures off "$@" ;;
    http) "$FDL_MIRROR" sync "http://127.0.0.1:$nginx_port/" "$mirror" --allow-plain-http --signatures off "$@" ;;
    s3) publish_to_s3 && with_s3 "$FDL_MIRROR" sync s3://origins/repo/ "$mirror" --allow-plain-http --signatures off "$@" ;;
  esac
}

for kind in folder http s3; do
  m=$work/$kind
  tag=$(cat "$origin/refs/tags/v1")

  expect_status 0 "$kind: a tag-only mirror" -- partial_sync $kind "$m-tags" --ref 'refs/tags/*' --head refs/tags/v1
  [ "$(refs_of "$m-tags")" = "refs/tags/v1 " ] && pass || fail "$kind: the tag-only mirror holds $(refs_of "$m-tags")"
  [ "$(held "$m-tags")" -eq 1 ] && [ -f "$m-tags/versions/$tag/version.json" ] && pass ||
    fail "$kind: the tag-only mirror holds $(held "$m-tags") versions, want v1's alone"
  expect_status 0 "$kind: the tag-only mirror verifies" -- "$FDL_MIRROR" verify "$m-tags"
  expect_output "partial: follows refs/tags/*, HEAD names refs/tags/v1, since " "$kind: verify says it is partial"

  expect_status 0 "$kind: depth 3 of a 30-version main" -- partial_sync $kind "$m-shallow" --ref refs/heads/main --depth 3
  [ "$(held "$m-shallow")" -eq 3 ] && holds_newest "$m-shallow" 3 && pass ||
    fail "$kind: depth 3 holds $(held "$m-shallow") versions, want the newest 3 of main"
  [ "$(cat "$m-shallow/refs/heads/main")" = "$(main_line | sed -n 1p)" ] && pass || fail "$kind: main is not the origin's"
  grep -q '"depth":3' "$m-shallow/.fdl-mirror/partial" && pass ||
    fail "$kind: the record: $(cat "$m-shallow/.fdl-mirror/partial" 2>&1)"
  expect_status 0 "$kind: the shallow mirror verifies" -- "$FDL_MIRROR" verify "$m-shallow"
  expect_output "partial: follows refs/heads/main, depth 3" "$kind: verify says it is shallow"
  expect_output "1 parent(s) below the window, not held (expected)" "$kind: the dangling parent is expected"
  expect_output "3 version(s) audited, 0 failed, 0 repository problem(s)" "$kind: the three versions audited"

  expect_status 0 "$kind: deepened to 10" -- partial_sync $kind "$m-shallow" --ref refs/heads/main --depth 10
  [ "$(held "$m-shallow")" -eq 10 ] && holds_newest "$m-shallow" 10 && pass ||
    fail "$kind: deepened, holds $(held "$m-shallow") versions, want the newest 10"
  expect_status 0 "$kind: made shallower" -- partial_sync $kind "$m-shallow" --ref refs/heads/main --depth 2
  [ "$(held "$m-shallow")" -eq 10 ] && pass || fail "$kind: shallower deleted versions: $(held "$m-shallow") left"
  grep -q '"depth":2' "$m-shallow/.fdl-mirror/partial" && pass || fail "$kind: the record says another depth"

  expect_status 0 "$kind: tags followed too" -- partial_sync $kind "$m-shallow" --ref refs/heads/main \
    --ref 'refs/tags/*' --depth 2
  [ "$(refs_of "$m-shallow")" = "refs/heads/main refs/tags/v1 " ] && pass || fail "$kind: holds $(refs_of "$m-shallow")"
  [ -f "$m-shallow/versions/$tag/version.json" ] && pass || fail "$kind: the newly followed tag's version is not copied"

  # The origin's main moves by five, past the window of two: no rewind, a gap in the line.
  for i in $(seq 5); do "$FDL_PUBLISHER" add "$origin" main 100 >/dev/null; done
  expect_status 0 "$kind: main moved past the window" -- partial_sync $kind "$m-shallow" --ref refs/heads/main \
    --ref 'refs/tags/*' --depth 2
  ! grep -q "rewound" "$work/out" "$work/err" && pass || fail "$kind: a move past the window reported as a rewind"
  [ "$(cat "$m-shallow/refs/heads/main")" = "$(main_line | sed -n 1p)" ] && pass || fail "$kind: main did not move"
  [ "$(held "$m-shallow")" -eq 13 ] && pass || fail "$kind: holds $(held "$m-shallow") versions, want 10 + v1 + 2"
  expect_status 0 "$kind: the mirror with a gap verifies" -- "$FDL_MIRROR" verify "$m-shallow" --json
  n=$($python -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r["versions"]), len(r["partial"]["parents_not_held"]), r["partial"]["depth"])' "$work/out")
  [ "$n" = "13 2 2" ] && pass || fail "$kind: verify --json audited/parents-not-held/depth: $n, want 13 2 2"

  expect_status 0 "$kind: main no longer followed" -- partial_sync $kind "$m-shallow" --ref 'refs/tags/*' \
    --head refs/tags/v1 --depth 2
  expect_output "refs/heads/main: no longer followed; the mirror keeps it at" "$kind: says main is no longer followed"
  [ "$(held "$m-shallow")" -eq 13 ] && pass || fail "$kind: a ref no longer followed lost versions"
done
finish
