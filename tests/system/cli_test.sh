# The command line: help, version, usage errors, exit codes, the JSON report.
source "$(dirname "$0")/lib.sh"

expect_status 0 "--help" -- "$FDL_MIRROR" --help
expect_output "fdl-mirror sync ORIGIN MIRROR" "--help"
expect_status 0 "--version" -- "$FDL_MIRROR" --version
expect_output "fdl-mirror 0." "--version"
expect_output "frozen catalog names its data files" "--version says the catalog is the source of data files"

expect_status 2 "no command" -- "$FDL_MIRROR"
expect_status 2 "unknown command" -- "$FDL_MIRROR" frobnicate
expect_status 2 "sync with one argument" -- "$FDL_MIRROR" sync only-one
expect_status 2 "unknown option" -- "$FDL_MIRROR" sync a b --frobnicate
expect_status 2 "bad concurrency" -- "$FDL_MIRROR" sync a b --concurrency 0
expect_status 2 "bad policy" -- "$FDL_MIRROR" sync a b --signatures sometimes
expect_status 2 "required signatures without keys" -- "$FDL_MIRROR" sync a b --signatures required
expect_output "needs --allowed-signers" "required signatures without keys"

"$FDL_PUBLISHER" sample "$work/origin"
expect_status 2 "an http mirror is refused" -- "$FDL_MIRROR" sync "$work/origin" https://example.org/lake/
expect_output "an HTTP store is read-only" "http mirror"
expect_status 2 "plain http without --allow-plain-http" -- "$FDL_MIRROR" sync http://127.0.0.1:1/lake/ "$work/m0"
expect_output "plain http:// is refused unless allowed explicitly (--allow-plain-http;" "plain http: the flag named"
expect_status 2 "an S3 endpoint over plain http without --allow-plain-http" -- env AWS_ACCESS_KEY_ID=a \
  AWS_SECRET_ACCESS_KEY=b AWS_ENDPOINT_URL=http://127.0.0.1:1 "$FDL_MIRROR" verify s3://bucket/prefix/
expect_output "is plain http://, refused unless allowed explicitly (--allow-plain-http;" "S3 over plain http: the flag named"
expect_status 3 "an s3 mirror without credentials" -- env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_PROFILE \
    HOME="$work" "$FDL_MIRROR" sync "$work/origin" s3://bucket/prefix/
expect_output "no S3 credentials for profile default: looked in the environment" "s3 says where it looked"
expect_status 2 "a file:// URL with a relative path" -- "$FDL_MIRROR" sync file://relative/path "$work/m0"
expect_status 3 "absent origin folder" -- "$FDL_MIRROR" sync "$work/absent" "$work/m0"

expect_status 0 "first sync" -- "$FDL_MIRROR" sync "$work/origin" "file://$work/mirror"
expect_output "published 4 version(s)" "first sync summary"
expect_status 0 "mirror is consistent" -- "$FDL_PUBLISHER" check "$work/mirror"
expect_status 0 "rerun as JSON" -- "$FDL_MIRROR" sync "$work/origin" "$work/mirror" --json
python3 - "$work/out" <<'PY' && pass || fail "JSON report fields"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["command"] == "sync" and report["exit_code"] == 0, report
assert report["published"] == [] and report["files_copied"] == 0, report
assert report["versions_in_mirror"] == 4 and report["fatal"] is None, report
assert report["pending_files"] == 0 and report["pending_bytes"] == 0, report
PY
expect_status 0 "verify the mirror" -- "$FDL_MIRROR" verify "$work/mirror"
expect_output "4 version(s) audited, 0 failed" "verify summary"
expect_status 0 "verify within the least memory limit" -- "$FDL_MIRROR" verify "$work/mirror" --memory-limit 16MiB
expect_status 2 "verify refuses a memory limit under 16MiB" -- "$FDL_MIRROR" verify "$work/mirror" --memory-limit 8MiB
expect_output "--memory-limit: '8MiB' is not a size of at least 16MiB" "the limit named"

# Damage the mirror: verify names the object and exits 1.
data=$(find "$work/mirror/data" -name 'ducklake-0003.parquet')
rm "$data"
expect_status 1 "verify a damaged mirror" -- "$FDL_MIRROR" verify "$work/mirror" --json
expect_output "ducklake-0003.parquet: missing" "verify names the missing data file"

# A held version: exit 1, the mirror stays consistent.
tip=$(cat "$work/origin/refs/heads/dev")
printf 'tampered' >> "$work/origin/versions/$tip/ducklake.duckdb"
expect_status 1 "sync with a tampered catalog" -- "$FDL_MIRROR" sync "$work/origin" "$work/mirror2"
expect_output "held 1 version(s)" "held summary"
expect_output "ducklake.duckdb: size is" "held reason names the catalog"
expect_status 0 "mirror with a held version is consistent" -- "$FDL_PUBLISHER" check "$work/mirror2"

# One writer per mirror: a second sync while the first holds the lock is refused.
mkdir -p "$work/mirror/.fdl-mirror"
flock -n "$work/mirror/.fdl-mirror/lock" sleep 5 &
holder=$!
sleep 0.3
expect_status 3 "a second sync into a locked mirror" -- "$FDL_MIRROR" sync "$work/origin" "$work/mirror"
expect_output "another fdl-mirror sync is writing this mirror" "the lock is named"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true

# Nothing is made through a link: .fdl-mirror as a symbolic link to elsewhere is refused,
# and no lock file appears where it points.
"$FDL_MIRROR" sync "$work/origin" "$work/mirror5" >/dev/null 2>&1 || true # its dev tip was tampered with above
mkdir -p "$work/elsewhere"
rm -rf "$work/mirror5/.fdl-mirror"
ln -s "$work/elsewhere" "$work/mirror5/.fdl-mirror"
expect_status 3 "a mirror whose .fdl-mirror is a link" -- "$FDL_MIRROR" sync "$work/origin" "$work/mirror5"
expect_output ".fdl-mirror: not a folder (links are not followed)" "the link is named"
[ -z "$(ls -A "$work/elsewhere")" ] && pass || fail "something was created through the link: $(ls -A "$work/elsewhere")"

# Nor through a link one level down: .fdl-mirror a real folder, its lock a symbolic link to
# a file outside. Refused; the file there is neither created nor written.
"$FDL_MIRROR" sync "$work/origin" "$work/mirror6" >/dev/null 2>&1 || true # its dev tip was tampered with above
mkdir -p "$work/outside"
rm -rf "$work/mirror6/.fdl-mirror"
mkdir "$work/mirror6/.fdl-mirror"
ln -s "$work/outside/lock" "$work/mirror6/.fdl-mirror/lock"
expect_status 3 "a mirror whose lock is a link to nowhere" -- "$FDL_MIRROR" sync "$work/origin" "$work/mirror6"
expect_output ".fdl-mirror/lock: is a link (links are not followed)" "the linked lock is named"
[ -z "$(ls -A "$work/outside")" ] && pass || fail "the lock's link target was created: $(ls -A "$work/outside")"
printf 'not a lock\n' >"$work/outside/lock"
touch -d '2020-01-01 00:00:00' "$work/outside/lock"
before=$(stat -c '%s %Y %a' "$work/outside/lock")
expect_status 3 "a mirror whose lock is a link to a file" -- "$FDL_MIRROR" sync "$work/origin" "$work/mirror6"
expect_output ".fdl-mirror/lock: is a link (links are not followed)" "the linked lock is named again"
[ "$(cat "$work/outside/lock")" = "not a lock" ] && [ "$(stat -c '%s %Y %a' "$work/outside/lock")" = "$before" ] &&
  pass || fail "the file behind the lock's link was changed"
[ -L "$work/mirror6/.fdl-mirror/lock" ] && pass || fail "the link itself was replaced"

# A mirror of another repository gets nothing written, not even the lock.
"$FDL_PUBLISHER" sample "$work/other-origin"
python3 - "$work/other-origin/fdl.json" <<'PY'
import json, sys
settings = json.load(open(sys.argv[1]))
settings["id"] = "another-repository"
json.dump(settings, open(sys.argv[1], "w"))
PY
"$FDL_MIRROR" sync "$work/other-origin" "$work/other-mirror" >/dev/null 2>&1
rm -rf "$work/other-mirror/.fdl-mirror"
before=$(cd "$work/other-mirror" && find . | sort | md5sum)
expect_status 1 "a mirror of another repository" -- "$FDL_MIRROR" sync "$work/origin" "$work/other-mirror"
expect_output "the mirror holds repository" "another repository is named"
after=$(cd "$work/other-mirror" && find . | sort | md5sum)
[ "$before" = "$after" ] && pass || fail "a mirror of another repository was written to"
[ ! -e "$work/other-mirror/.fdl-mirror" ] && pass || fail ".fdl-mirror was made in a mirror of another repository"

# Names from the origin reach the terminal escaped: a right-to-left override in a ref
# name, and an escape sequence in a refused one. The JSON report keeps the exact bytes.
"$FDL_PUBLISHER" sample "$work/torigin"
python3 - "$work/torigin" <<'PY'
import sys, pathlib
root = pathlib.Path(sys.argv[1])
tip = (root / "refs/heads/main").read_bytes()
(root / "refs/heads").joinpath("rlo\u202efdp.exe").write_bytes(tip)
(root / "refs/heads").joinpath("esc\x1b[31mred").write_bytes(tip)
PY
expect_status 1 "sync an origin with hostile ref names" -- "$FDL_MIRROR" sync "$work/torigin" "$work/tmirror"
expect_output 'refs/heads/rlo\u{202e}fdp.exe' "a bidirectional override is shown escaped"
expect_output 'refs/heads/esc\x1b[31mred' "an escape sequence is shown escaped"
! grep -q $'\xe2\x80\xae\|\x1b' "$work/out" "$work/err" && pass || fail "raw control bytes reached the terminal"
expect_status 1 "the same as JSON" -- "$FDL_MIRROR" sync "$work/torigin" "$work/tmirror2" --json
grep -q $'rlo\xe2\x80\xaefdp.exe' "$work/out" && pass || fail "the JSON report lost the exact ref name"

# Signature options: the keys file is read and parsed before anything runs.
expect_status 2 "unreadable allowed_signers" -- "$FDL_MIRROR" sync "$work/origin" "$work/m3" --allowed-signers "$work/absent"
expect_output "does not exist" "absent allowed_signers"
[ ! -e "$work/m3" ] && pass || fail "a usage error must not create the mirror"
# A line that does not parse is skipped, as ssh-keygen skips it, and named: it trusts no
# key, so every version is held under the default policy (required).
printf 'alice@example.org frobnicate ssh-ed25519 AAAA\n' >"$work/bad_signers"
expect_status 1 "malformed allowed_signers" -- "$FDL_MIRROR" sync "$work/origin" "$work/m3b" --allowed-signers "$work/bad_signers"
expect_output "bad_signers:1: " "malformed allowed_signers names file and line"
expect_output "(this line of allowed_signers is skipped: it grants nothing)" "the line is said to be skipped"
ssh-keygen -q -t ed25519 -N "" -f "$work/key"
echo "alice@example.org $(cut -d' ' -f1,2 "$work/key.pub")" >"$work/signers"
"$FDL_PUBLISHER" sample "$work/sorigin"
expect_status 1 "required signatures hold unsigned versions" -- "$FDL_MIRROR" sync "$work/sorigin" "$work/m4" --allowed-signers "$work/signers" --json
python3 - "$work/out" <<'PY' && pass || fail "held for missing signatures in the JSON report"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["published"] == [], report
assert {h["kind"] for h in report["held"]} == {"verify.missing_signature", "ancestor_held"}, report["held"]
PY
for v in "$work"/sorigin/versions/*; do ssh-keygen -Y sign -q -f "$work/key" -n fdl "$v/version.json"; done
expect_status 0 "signed versions are published" -- "$FDL_MIRROR" sync "$work/sorigin" "$work/m4" --allowed-signers "$work/signers"
expect_output "signed " "the summary names the signer"
expect_status 0 "verify with keys" -- "$FDL_MIRROR" verify "$work/m4" --allowed-signers "$work/signers"
expect_output "signed by alice@example.org" "verify names the signer"
fp=$(ssh-keygen -lf "$work/key.pub" | cut -d' ' -f2)
expect_status 0 "verify --without-key" -- "$FDL_MIRROR" verify "$work/m4" --allowed-signers "$work/signers" --without-key "$fp"
expect_output "4 version(s) would lose their trusted signature" "revocation impact"
rm "$work"/m4/versions/*/version.json.sig
expect_status 1 "verify a mirror whose signatures were removed" -- "$FDL_MIRROR" verify "$work/m4" --allowed-signers "$work/signers"
expect_output "missing_signature" "verify reports removed signatures"

# --deadline cuts a whole sync or verify: exit 3, a message naming it, and a mirror in
# which nothing half-copied is visible.
"$FDL_PUBLISHER" sample "$work/slow"
"$FDL_PUBLISHER" add "$work/slow" main 4194304 >/dev/null
expect_status 2 "a deadline under a second" -- "$FDL_MIRROR" sync "$work/slow" "$work/m5" --deadline 10ms
expect_output "--deadline: '10ms' is not a duration of at least 1s" "the deadline's floor named"
started=$(date +%s)
expect_status 3 "sync cut at its deadline" -- "$FDL_MIRROR" sync "$work/slow" "$work/m5" --deadline 2s \
  --max-bytes-per-second 256KiB
expect_output "sync: cut at its --deadline of 2s" "the cut sync says why"
[ $(( $(date +%s) - started )) -lt 30 ] && pass || fail "the cut sync took $(( $(date +%s) - started )) s"
expect_status 0 "the cut mirror shows nothing half-copied" -- "$FDL_PUBLISHER" check "$work/m5"
expect_status 0 "the next sync goes on" -- "$FDL_MIRROR" sync "$work/slow" "$work/m5"
expect_status 3 "verify cut at its deadline" -- "$FDL_MIRROR" verify "$work/m5" --deadline 1s --max-bytes-per-second 64KiB
expect_output "verify: cut at its --deadline of 1s" "the cut verify says why"

# User information in any location form is refused before anything is looked up, and
# never echoed.
for location in 's3://KEY:SECRET@bucket/p/' 'S3://KEY:SECRET@bucket/p/' 'file://u:SECRET@/tmp/x' \
  'HTTPS://u:SECRET@example.org/lake/' 'https://SECRET@example.org/lake/'; do
  expect_status 2 "user information in $location (origin)" -- "$FDL_MIRROR" sync "$location" "$work/m6"
  expect_output "holds user information" "the refusal of $location says why"
  ! grep -q SECRET "$work/out" "$work/err" && pass || fail "$location: the secret is echoed"
  ! grep -q "no S3 credentials" "$work/err" && pass || fail "$location: went looking for credentials"
  expect_status 2 "user information in $location (verify)" -- "$FDL_MIRROR" verify "$location" --json
  ! grep -q SECRET "$work/out" "$work/err" && pass || fail "$location: verify echoes the secret"
done
expect_status 2 "user information in an S3 mirror" -- "$FDL_MIRROR" sync "$work/origin" 's3://KEY:SECRET@bucket/p/'
! grep -q SECRET "$work/out" "$work/err" && pass || fail "the mirror's secret is echoed"

finish
