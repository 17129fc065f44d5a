# Partial mirrors in the daemon (issue 35): a repository's `refs:`, `head:` and `depth:`.
# The per-ref series exist for the followed refs only; `status` and /status say what the
# mirror follows; patterns changed by a reload start a pass, which adds the newly followed
# refs and drops the series of a ref no longer followed (kept in the mirror, warned); `verify`
# and `compare` of the partial mirrors say they are partial and call nothing missing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

origin=$work/origin
"$FDL_PUBLISHER" sample "$origin" >/dev/null
for i in $(seq 5); do "$FDL_PUBLISHER" add "$origin" main 100 >/dev/null; done

# write_config SHALLOW_REFS: the two repositories, the shallow one following SHALLOW_REFS.
write_config() {
  cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
defaults: { interval: 1h, signatures: off }
repositories:
  - name: shallow
    origin: $origin
    mirror: $work/shallow
    refs: { include: [ $1 ] }
    head: refs/tags/v1
    depth: 3
  - { name: tags, origin: $origin, mirror: $work/tags, refs: { include: [ "refs/tags/*" ] }, head: refs/tags/v1 }
YAML
}
write_config refs/heads/main
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="shallow",result="ok"}' == 1 30 "the shallow mirror's pass"
wait_for_metric 'fdl_mirror_passes_total{repo="tags",result="ok"}' == 1 30 "the tag-only mirror's pass"
expect_series 'fdl_mirror_ref_in_sync{repo="shallow"}' == 1 "one followed ref, one series"
expect_metric 'fdl_mirror_ref_in_sync{repo="shallow",ref="refs/heads/main"}' == 1 "main in sync"
expect_series 'fdl_mirror_ref_in_sync{repo="tags"}' == 1 "the tag-only mirror: one series"
expect_metric 'fdl_mirror_ref_in_sync{repo="tags",ref="refs/tags/v1"}' == 1 "v1 in sync"
expect_metric 'fdl_mirror_refs{repo="shallow"}' == 1 "fdl_mirror_refs counts the followed refs"
[ "$(find "$work/shallow/versions" -name version.json | wc -l)" -eq 3 ] && pass ||
  fail "depth 3: the mirror holds $(find "$work/shallow/versions" -name version.json | wc -l) versions"

expect_status 0 "status of the partial mirrors" -- "$FDL_MIRROR" status --config "$work/mirror.yaml"
expect_output "partial:       follows refs/heads/main, HEAD names refs/tags/v1, depth 3" "status says what it follows"
curl -fsS --max-time 5 "$(url /status)" >"$work/status.json" && pass || fail "GET /status failed"
"$python" - "$work/status.json" <<'PY' && pass || fail "/status: partial: $(cat "$work/status.json")"
import json, sys
repos = {r["name"]: r for r in json.load(open(sys.argv[1]))["repositories"]}
assert repos["shallow"]["partial"] == "follows refs/heads/main, HEAD names refs/tags/v1, depth 3", repos["shallow"]
assert repos["tags"]["partial"] == "follows refs/tags/*, HEAD names refs/tags/v1", repos["tags"]
assert [r["name"] for r in repos["shallow"]["refs"]] == ["refs/heads/main"], repos["shallow"]["refs"]
PY

expect_status 0 "verify of the shallow mirror" -- "$FDL_MIRROR" verify "$work/shallow"
expect_output "partial: follows refs/heads/main, HEAD names refs/tags/v1, depth 3, since " "verify says partial"
expect_status 0 "compare of the origin and the tag-only mirror" -- "$FDL_MIRROR" compare "$origin" "$work/tags"
expect_output "partial: refs/heads/main: not followed by $work/tags (a partial mirror)" "compare: not followed"
! grep -q "absent at" "$work/out" && pass || fail "compare calls a ref the partial mirror does not follow absent"
expect_output "result: 0 divergence(s), 0 ref(s) behind somewhere" "compare: nothing behind"

# follow PATTERNS: the shallow mirror follows PATTERNS from a reload on, which starts its
# pass at once (its settings changed); sets mark, the log's length before it.
follow() {
  write_config "$1"
  mark=$(log_length)
  kill -HUP "$daemon_pid"
  wait_for_log 20 "the reload" "$mark" "configuration reloaded" "changed shallow"
}

# Tags followed too: the reload's pass copies v1, and its series appears.
follow 'refs/heads/main, "refs/tags/*"'
wait_for_series 'fdl_mirror_ref_in_sync{repo="shallow"}' 2 30 "the newly followed tag's series"
[ -f "$work/shallow/refs/tags/v1" ] && pass || fail "the newly followed tag is not in the mirror"

# main no longer followed: kept in the mirror, warned, its series gone.
follow '"refs/tags/*"'
wait_for_series 'fdl_mirror_ref_in_sync{repo="shallow"}' 1 30 "only the tag's series"
expect_metric 'fdl_mirror_ref_in_sync{repo="shallow",ref="refs/tags/v1"}' == 1 "the tag's series stays"
[ -f "$work/shallow/refs/heads/main" ] && pass || fail "a ref no longer followed was removed from the mirror"
wait_for_log 20 "the warning" "$mark" "refs/heads/main: no longer followed; the mirror keeps it at"
finish
