# `run --once --dry-run` (issue 33, section 3): what one pass of every configured repository
# would do, read from its origin and its mirror, with nothing written anywhere: not the
# mirror (not even its folder when it does not exist yet), not the state folder. A new
# mirror gets its versions and refs listed; an up-to-date one nothing; a new version and the
# move of its branch are named, with the files and bytes each version would copy; versions
# the pass would hold are named with why (a catalog changed after its record, a version
# without the signature the repository's policy requires), and their refs left where
# they are; a repository whose origin cannot be read is named with why (exit 1);
# --dry-run without --once is a usage error.
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
count_files() { find "$@" -type f | wc -l; }
count_bytes() { find "$@" -type f -printf '%s\n' | awk '{ n += $1 } END { print n + 0 }'; }

expect_status 0 "a dry run into a mirror that does not exist" -- \
  "$FDL_MIRROR" run --config "$work/mirror.yaml" --once --dry-run
expect_output "population: the mirror folder $work/mirror does not exist: the pass would make it" "says the folder would be made"
expect_output "population: would create fdl.json (a new mirror)" "says fdl.json would be created"
expect_output "population: would publish $versions version(s), oldest first: " "counts the versions"
expect_output "population: would create refs/heads/main at $(cat "$work/origin/refs/heads/main")" "names the ref and its target"
# Every file of every version and every data file, each once (the data files are shared).
expect_output "population: would copy $(count_files "$work/origin/versions" "$work/origin/data") file(s), \
$(count_bytes "$work/origin/versions" "$work/origin/data") bytes (" "counts the files and bytes it would copy"
expect_output "in all, of which $(count_files "$work/origin/data") file(s), $(count_bytes "$work/origin/data") bytes (" \
  "and the data files among them"
[ ! -e "$work/mirror" ] && pass || fail "the dry run made the mirror folder"
[ ! -e "$work/state" ] && pass || fail "the dry run made the state folder"

expect_status 0 "sync the mirror" -- "$FDL_MIRROR" sync "$work/origin" "$work/mirror" --signatures off
expect_status 0 "a dry run of a mirror in sync" -- "$FDL_MIRROR" run --config "$work/mirror.yaml" --once --dry-run
expect_output "population: no version to publish" "nothing to publish"
expect_output "population: 3 of 3 ref(s) already in sync" "every ref in sync"

before=$(tree "$work/mirror")
old_main=$(cat "$work/origin/refs/heads/main")
old_dev=$(cat "$work/origin/refs/heads/dev")
new=$("$FDL_PUBLISHER" add "$work/origin" main 1000)
tampered=$("$FDL_PUBLISHER" add "$work/origin" dev 500)
printf x >>"$work/origin/versions/$tampered/ducklake.duckdb" # no longer the catalog its record pins
echo "  - { name: unreadable, origin: $work/no-such-origin, mirror: $work/other-mirror }" >>"$work/mirror.yaml"
expect_status 1 "a dry run with a new version, and a repository whose origin cannot be read" -- \
  "$FDL_MIRROR" run --config "$work/mirror.yaml" --once --dry-run
expect_output "population: would publish 1 version(s), oldest first: ${new:0:13}" "names the new version"
expect_output "population: would move refs/heads/main from $old_main to $new" "names the branch's move"
expect_output "population:   $new: would copy $(($(count_files "$work/origin/versions/$new") + 1)) file(s), \
$(($(count_bytes "$work/origin/versions/$new") + 1000)) bytes (" "what the new version would copy: its folder and its data file"
expect_output "population: would hold $tampered: versions/$tampered/ducklake.duckdb" "names the version it would hold and its file"
expect_output "population: would leave refs/heads/dev at $old_dev: its target $tampered would be held" \
  "leaves the branch of the held version"
expect_output "run --dry-run: repository 'unreadable': origin: " "names the repository it could not plan"
[ "$(tree "$work/mirror")" = "$before" ] && pass || fail "the dry run changed the mirror"
[ ! -e "$work/other-mirror" ] && [ ! -e "$work/state" ] && pass || fail "the dry run made a folder"

# --- a repository whose policy requires signatures: an unsigned version would be held ----------
mkdir -p "$work/keys"
ssh-keygen -q -t ed25519 -N '' -C trusted -f "$work/keys/trusted"
echo "ops@example.org namespaces=\"fdl\" $(cut -d' ' -f1,2 "$work/keys/trusted.pub")" >"$work/keys/allowed_signers"
"$FDL_PUBLISHER" sample "$work/signed-origin" --sign "$work/keys/trusted" >/dev/null
expect_status 0 "sync the signed repository" -- "$FDL_MIRROR" sync "$work/signed-origin" "$work/signed-mirror" \
  --signatures required --allowed-signers "$work/keys/allowed_signers"
signed_main=$(cat "$work/signed-origin/refs/heads/main")
unsigned=$("$FDL_PUBLISHER" add "$work/signed-origin" main 100)
cat >"$work/signed.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
repositories:
  - name: signed
    origin: $work/signed-origin
    mirror: $work/signed-mirror
    signatures: required
    allowed_signers: $work/keys/allowed_signers
YAML
expect_status 0 "a dry run with the repository's signature policy" -- \
  "$FDL_MIRROR" run --config "$work/signed.yaml" --once --dry-run
expect_output "signed: would hold $unsigned: " "holds the unsigned version"
expect_output "signature" "says it is the signature"
expect_output "signed: would leave refs/heads/main at $signed_main: its target $unsigned would be held" "and keeps main"
expect_output "signed: the versions it would hold need 1 file(s), 100 bytes" "counts the data the held version waits with"

expect_status 2 "--dry-run without --once" -- "$FDL_MIRROR" run --config "$work/mirror.yaml" --dry-run
expect_output "run: --dry-run and --once go together" "says why"
finish
