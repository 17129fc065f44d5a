# Partial mirrors by chosen refs (issue 35, the first part; depth and the daemon's events are
# not built yet): `sync --ref/--exclude-ref/--head` on folders. A tag-only mirror holds the
# tag and its version's line and nothing else, and needs --head since the origin's HEAD
# names a branch it does not follow; a main-only mirror; an exclusion; patterns widened
# later add the newly followed refs and drop the record; a bad pattern is a usage error.
source "$(dirname "$0")/lib.sh"

origin=$work/origin
"$FDL_PUBLISHER" sample "$origin" >/dev/null
tag=$(cat "$origin/refs/tags/v1")
main=$(cat "$origin/refs/heads/main")
refs_of() { (cd "$1" && find refs -type f | sort | tr '\n' ' '); }
versions_of() { ls "$1/versions" | wc -l; }

expect_status 1 "a tag-only mirror whose origin's HEAD names a branch, without --head" -- \
  "$FDL_MIRROR" sync "$origin" "$work/tags" --signatures off --ref 'refs/tags/*'
expect_output "HEAD: names refs/heads/main, which this partial mirror does not follow" "says why, naming the ref"
[ ! -e "$work/tags/versions" ] && pass || fail "the refused pass copied versions"
expect_status 0 "a tag-only mirror with --head" -- \
  "$FDL_MIRROR" sync "$origin" "$work/tags" --signatures off --ref 'refs/tags/*' --head refs/tags/v1
[ "$(refs_of "$work/tags")" = "refs/tags/v1 " ] && pass || fail "tag-only mirror holds refs: $(refs_of "$work/tags")"
[ "$(versions_of "$work/tags")" -eq 1 ] && pass || fail "tag-only mirror holds $(versions_of "$work/tags") versions, want 1"
[ "$(cat "$work/tags/HEAD")" = "ref: refs/tags/v1" ] && pass || fail "HEAD is '$(cat "$work/tags/HEAD")'"
grep -q '"refs/tags/v1"' "$work/tags/refs.json" && ! grep -q 'refs/heads' "$work/tags/refs.json" && pass ||
  fail "refs.json lists what the mirror does not hold: $(cat "$work/tags/refs.json")"
grep -q '"include":\["refs/tags/\*"\]' "$work/tags/.fdl-mirror/partial" && pass ||
  fail "the record of what it follows: $(cat "$work/tags/.fdl-mirror/partial" 2>&1)"
expect_status 0 "the tag-only mirror verifies" -- "$FDL_MIRROR" verify "$work/tags"

expect_status 0 "a main-only mirror" -- "$FDL_MIRROR" sync "$origin" "$work/main" --signatures off --ref refs/heads/main
[ "$(refs_of "$work/main")" = "refs/heads/main " ] && pass || fail "main-only mirror holds refs: $(refs_of "$work/main")"
[ "$(versions_of "$work/main")" -eq 3 ] && pass || fail "main-only mirror holds $(versions_of "$work/main") versions, want 3"
[ "$(cat "$work/main/refs/heads/main")" = "$main" ] && pass || fail "main is not the origin's"

expect_status 0 "everything but dev" -- "$FDL_MIRROR" sync "$origin" "$work/nodev" --signatures off \
  --exclude-ref refs/heads/dev
[ "$(refs_of "$work/nodev")" = "refs/heads/main refs/tags/v1 " ] && pass || fail "holds refs: $(refs_of "$work/nodev")"

expect_status 0 "the main-only mirror widened to every ref" -- "$FDL_MIRROR" sync "$origin" "$work/main" --signatures off
[ "$(refs_of "$work/main")" = "refs/heads/dev refs/heads/main refs/tags/v1 " ] && pass ||
  fail "widened mirror holds refs: $(refs_of "$work/main")"
[ "$(versions_of "$work/main")" -eq 4 ] && pass || fail "widened mirror holds $(versions_of "$work/main") versions, want 4"
[ ! -e "$work/main/.fdl-mirror/partial" ] && pass || fail "a full mirror keeps a record of being partial"

expect_status 2 "a pattern that is no ref name" -- "$FDL_MIRROR" sync "$origin" "$work/bad" --ref 'heads/main'
expect_output "--ref: ref pattern 'heads/main': does not start with refs/" "says why"
finish
