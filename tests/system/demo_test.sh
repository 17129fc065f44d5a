# The README's demo: a signed sample repository mirrored with --signatures required, a
# new unsigned version and one signed by an untrusted key held with their reasons (the
# refs not moved to them), and a final verify that checks every signature.
source "$(dirname "$0")/lib.sh"
expect_status 0 "scripts/demo" -- env TMPDIR="$work" FDL_MIRROR="$FDL_MIRROR" FDL_PUBLISHER="$FDL_PUBLISHER" \
    "$SOURCE_DIR/scripts/demo"

# The signed sample: published, each version with its signer named.
expect_output "published 4 version(s)" "demo summary"
signed=$(grep -c '^signed [0-9a-f-]* by publisher@example.org (SHA256:' "$work/out" || true)
if [ "$signed" -eq 4 ]; then pass; else fail "the first sync names the signer of 4 versions, not $signed"; fi

# The new versions: held with their reasons, and nothing of them in the mirror's refs.
unsigned=$(sed -n 's/^main -> \([0-9a-f-]*\) (no version.json.sig)$/\1/p' "$work/out")
untrusted=$(sed -n 's/^dev  -> \([0-9a-f-]*\) (signed by stranger@example.org.*$/\1/p' "$work/out")
if [ -n "$unsigned" ] && [ -n "$untrusted" ]; then pass; else fail "the demo names the two new versions"; fi
expect_output "held 2 version(s):" "the second sync holds both new versions"
expect_output "  $unsigned: verify.missing_signature: " "the unsigned version is held for its missing signature"
expect_output "  $untrusted: verify.untrusted_key: " "the version signed by a stranger is held for its key"
expect_output "sync exited 1" "the demo goes on after the expected exit 1"
folder=$(sed -n 's/^demo folder: //p' "$work/out")
for ref in main dev; do
    tip=$(cat "$folder/mirror/refs/heads/$ref" 2>/dev/null || true)
    if [ -n "$tip" ] && [ "$tip" != "$unsigned" ] && [ "$tip" != "$untrusted" ]; then pass; else
        fail "the mirror's $ref is '$tip', want a version published before the held ones"
    fi
done
for id in "$unsigned" "$untrusted"; do
    if [ -n "$id" ] && [ ! -e "$folder/mirror/versions/$id/version.json" ]; then pass; else
        fail "held version '$id': unnamed by the demo, or published in the mirror"
    fi
done

# The final audit: every version passes, its signature checked.
expect_output "4 version(s) audited, 0 failed" "demo audit"
expect_output "catalog: DuckLake 1.0, snapshot 4, 1 table(s), 2 data file(s)" "the audit reads each catalog"
audited_signed=$(grep -c ': ok, signed by publisher@example.org (SHA256:' "$work/out" || true)
if [ "$audited_signed" -eq 4 ]; then pass; else fail "the audit names the signer of 4 versions, not $audited_signed"; fi
expect_output "(publisher@example.org) signed 4 version(s)" "the audit's trust summary"
expect_output "0 version(s) signed by no trusted key" "the audit finds no unsigned version"

if ! grep -qF "signatures are not checked" "$work/out" "$work/err"; then pass; else
    fail "the demo runs with signatures unchecked"
fi
finish
