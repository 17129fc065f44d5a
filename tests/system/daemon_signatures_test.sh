# The daemon with `signatures: required` and an allowed_signers file: versions signed by the
# trusted key are published and counted valid once each; a new version without a signature is
# held (verify.missing_signature), then with a signature by a key the file lacks is held
# (verify.untrusted_key), each counted by result; signed at last by the trusted key, it is
# taken on the next pass and the drift clears.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

origin=$work/origin
"$FDL_PUBLISHER" sample "$origin"
mkdir -p "$work/keys"
ssh-keygen -q -t ed25519 -N '' -C trusted -f "$work/keys/trusted"
ssh-keygen -q -t ed25519 -N '' -C stranger -f "$work/keys/stranger"
echo "ops@example.org namespaces=\"fdl\" $(cut -d' ' -f1,2 "$work/keys/trusted.pub")" >"$work/keys/population.allowed_signers"
for version in "$origin"/versions/*; do ssh-keygen -Y sign -q -f "$work/keys/trusted" -n fdl "$version/version.json"; done

cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
shutdown_timeout: 5s
defaults: { interval: 1s, jitter: 0%, signatures: required }
repositories:
  - name: population
    origin: $origin
    mirror: $work/mirror
    allowed_signers: keys/population.allowed_signers
YAML

# sign_staged ID KEY: signs the staged version ID with KEY, then puts the signature into the
# origin by rename (a reader never sees half of it).
sign_staged() {
  local file=versions/$1/version.json.sig
  rm -f "$work/stage/$file"
  ssh-keygen -Y sign -q -f "$work/keys/$2" -n fdl "$work/stage/versions/$1/version.json"
  replace_file "$origin/$file" <"$work/stage/$file"
}

start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="population",ref="refs/heads/main"}' == 1 30 "signed versions mirrored"
expect_metric 'fdl_mirror_signature_checks_total{repo="population",result="valid"}' == 4 "each published version counted valid"
scrape
ok_passes=$(metric 'fdl_mirror_passes_total{repo="population",result="ok"}')
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' '>=' "$((ok_passes + 2))" 10 "two more passes"
expect_metric 'fdl_mirror_signature_checks_total{repo="population",result="valid"}' == 4 "a version already published is not counted again"
for result in invalid missing untrusted; do
  expect_metric "fdl_mirror_signature_checks_total{repo=\"population\",result=\"$result\"}" == 0 "no $result signature (series made at 0)"
done
expect_status 0 "verify the mirror with the trusted key" -- "$FDL_MIRROR" verify "$work/mirror" \
  --allowed-signers "$work/keys/population.allowed_signers"
expect_output "signed by ops@example.org" "verify names the signer"

# --- a new version without a signature: held ---------------------------------------------------
stage "$origin"
unsigned=$("$FDL_PUBLISHER" add "$work/stage" main 1000)
install_staged "$origin"
wait_for_metric 'fdl_mirror_versions_held{repo="population",reason="verify.missing_signature"}' == 1 15 \
  "the unsigned version held for its missing signature"
expect_metric 'fdl_mirror_signature_checks_total{repo="population",result="missing"}' '>=' 1 "a missing signature counted"
expect_metric 'fdl_mirror_ref_in_sync{repo="population",ref="refs/heads/main"}' == 0 "main drifts"
expect_metric 'fdl_mirror_passes_total{repo="population",result="held"}' '>=' 1 "a held pass counted"
# What it would need once signed: its data file (1000 bytes), by the files.json it pins.
expect_metric 'fdl_mirror_pending_files{repo="population"}' == 1 "the unsigned version's data file pending"
expect_metric 'fdl_mirror_pending_bytes{repo="population"}' == 1000 "its bytes, as its files.json says"

# --- signed by a key the allowed_signers file lacks: still held, for another reason --------------
sign_staged "$unsigned" stranger
wait_for_metric 'fdl_mirror_versions_held{repo="population",reason="verify.untrusted_key"}' == 1 15 \
  "the version signed by a stranger held as untrusted"
expect_metric 'fdl_mirror_signature_checks_total{repo="population",result="untrusted"}' '>=' 1 "an untrusted signature counted"
expect_metric 'fdl_mirror_versions_held{repo="population",reason="verify.missing_signature"}' == 0 \
  "the missing signature is no longer the reason"
[ ! -e "$work/mirror/versions/$unsigned/version.json" ] && pass || fail "a version signed by an untrusted key was published"

# --- signed by the trusted key: taken, drift clears ---------------------------------------------
sign_staged "$unsigned" trusted
wait_for_metric 'fdl_mirror_ref_in_sync{repo="population",ref="refs/heads/main"}' == 1 15 "the signed version mirrored"
expect_metric 'fdl_mirror_signature_checks_total{repo="population",result="valid"}' == 5 "the new version counted valid"
expect_metric 'fdl_mirror_versions_held{repo="population",reason="verify.untrusted_key"}' == 0 "nothing held any more"
[ "$(ref_of "$work/mirror" refs/heads/main)" = "$unsigned" ] && pass || fail "main is not the newly signed version"
expect_status 0 "verify the mirror at the end" -- "$FDL_MIRROR" verify "$work/mirror" \
  --allowed-signers "$work/keys/population.allowed_signers"
expect_output "5 version(s) audited, 0 failed" "verify audits every version"

# verify --config: the repository's mirror (or origin) with the configuration's keys and policy.
expect_status 0 "verify --config --repository: the mirror, as the daemon checks it" -- \
  "$FDL_MIRROR" verify --config "$work/mirror.yaml" --repository population
expect_output "$work/mirror" "the mirror's location shown"
expect_output "5 version(s) audited, 0 failed" "every version audited with the configured keys"
expect_output "signed by ops@example.org" "the configured allowed_signers named the signer"
# The origin has a version signed by no trusted key: held by the daemon, failed by this audit.
sign_staged "$unsigned" stranger
expect_status 1 "verify --config --repository --origin: the origin fails the configured policy" -- \
  "$FDL_MIRROR" verify --config "$work/mirror.yaml" --repository population --origin --json
grep -q "$unsigned" "$work/out" && pass || fail "the origin's audit does not name the version signed by a stranger"
expect_status 2 "verify --config with an unknown repository" -- \
  "$FDL_MIRROR" verify --config "$work/mirror.yaml" --repository nope
expect_output "no repository named 'nope'" "the unknown name said"
expect_status 2 "verify --config with a key flag" -- \
  "$FDL_MIRROR" verify --config "$work/mirror.yaml" --repository population --allowed-signers /dev/null
expect_output "the keys, policy and store settings come from the configuration" "why the flag is refused"

stop_daemon TERM 10
expect_clean_exit "SIGTERM"
finish
