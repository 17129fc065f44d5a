# `run --once --dry-run` (issue 33, section 3): what one pass of every configured repository
# would do, read from its origin and its mirror, with nothing written anywhere: not the
# mirror (not even its folder when it does not exist yet), not the state folder. A new
# mirror gets its versions and refs listed; an up-to-date one nothing; a new version and the
# move of its branch are named; a repository whose origin cannot be read is named with why
# (exit 1); --dry-run without --once is a usage error.
source "$(dirname "$0")/lib.sh"

"$FDL_PUBLISHER" sample "$work/origin" >/dev/null
cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
defaults: { signatures: off }
repositories:
  - { name: population, origin: $work/origin, mirror: $work/mirror }
YAML
tree() { (cd "$1" && find . -type f -exec sha256sum {} + | sort); }
versions=$(ls "$work/origin/versions" | wc -l)

expect_status 0 "a dry run into a mirror that does not exist" -- \
  "$FDL_MIRROR" run --config "$work/mirror.yaml" --once --dry-run
expect_output "population: the mirror folder $work/mirror does not exist: the pass would make it" "says the folder would be made"
expect_output "population: would create fdl.json (a new mirror)" "says fdl.json would be created"
expect_output "population: would publish $versions version(s), oldest first: " "counts the versions"
expect_output "population: would create refs/heads/main at $(cat "$work/origin/refs/heads/main")" "names the ref and its target"
[ ! -e "$work/mirror" ] && pass || fail "the dry run made the mirror folder"
[ ! -e "$work/state" ] && pass || fail "the dry run made the state folder"

expect_status 0 "sync the mirror" -- "$FDL_MIRROR" sync "$work/origin" "$work/mirror" --signatures off
expect_status 0 "a dry run of a mirror in sync" -- "$FDL_MIRROR" run --config "$work/mirror.yaml" --once --dry-run
expect_output "population: no version to publish" "nothing to publish"
expect_output "population: 3 of 3 ref(s) already in sync" "every ref in sync"

before=$(tree "$work/mirror")
old_main=$(cat "$work/origin/refs/heads/main")
new=$("$FDL_PUBLISHER" add "$work/origin" main 1000)
echo "  - { name: unreadable, origin: $work/no-such-origin, mirror: $work/other-mirror }" >>"$work/mirror.yaml"
expect_status 1 "a dry run with a new version, and a repository whose origin cannot be read" -- \
  "$FDL_MIRROR" run --config "$work/mirror.yaml" --once --dry-run
expect_output "population: would publish 1 version(s), oldest first: ${new:0:13}" "names the new version"
expect_output "population: would move refs/heads/main from $old_main to $new" "names the branch's move"
expect_output "run --dry-run: repository 'unreadable': origin: " "names the repository it could not plan"
[ "$(tree "$work/mirror")" = "$before" ] && pass || fail "the dry run changed the mirror"
[ ! -e "$work/other-mirror" ] && [ ! -e "$work/state" ] && pass || fail "the dry run made a folder"

expect_status 2 "--dry-run without --once" -- "$FDL_MIRROR" run --config "$work/mirror.yaml" --dry-run
expect_output "run: --dry-run and --once go together" "says why"
finish
