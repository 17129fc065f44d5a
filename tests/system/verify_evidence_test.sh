# verify's report as evidence (issue 17): `verify --json` says when it ran, with which build,
# under which policy and keys (the allowed_signers file's sha256 equal to sha256sum's), which
# refs it read, and for every version the files it examined, whose sizes and digests match
# stat and sha256sum on disk; the summary lists the refs and the policy, and with
# --full-digests every digest whole.
source "$(dirname "$0")/lib.sh"

origin=$work/origin
mirror=$work/mirror
"$FDL_PUBLISHER" sample "$origin" >/dev/null
mkdir -p "$work/keys"
ssh-keygen -q -t ed25519 -N '' -C alice -f "$work/keys/alice"
signers=$work/keys/allowed_signers
echo "alice@example.org namespaces=\"fdl\" $(cut -d' ' -f1,2 "$work/keys/alice.pub")" >"$signers"
for version in "$origin"/versions/*; do ssh-keygen -Y sign -q -f "$work/keys/alice" -n fdl "$version/version.json"; done
fingerprint=$(ssh-keygen -lf "$work/keys/alice.pub" | cut -d' ' -f2)
signers_sha256=$(sha256sum "$signers" | cut -d' ' -f1)
tool_version=$("$FDL_MIRROR" --version | head -1 | cut -d' ' -f2)

expect_status 0 "sync the signed sample" -- "$FDL_MIRROR" sync "$origin" "$mirror" --allowed-signers "$signers"

# check_report REPORT ROOT LEDGER: the report's claims against the files under ROOT, with
# stat and sha256sum. LEDGER=yes: a mirror, whose every data file is hashed against its ledger.
check_report() {
  python3 - "$1" "$2" "$3" "$signers" "$signers_sha256" "$fingerprint" "$tool_version" <<'PY'
import json, os, re, subprocess, sys, time
report_file, root, ledger, signers, signers_sha256, fingerprint, tool_version = sys.argv[1:]
r = json.load(open(report_file))

def sha256sum(path):
    return subprocess.run(["sha256sum", path], check=True, capture_output=True, text=True).stdout.split()[0]

def size(path):
    return int(subprocess.run(["stat", "-c", "%s", path], check=True, capture_output=True, text=True).stdout)

# The earlier fields are all still there.
for field in ["command", "repository", "exit_code", "versions", "problems", "warnings", "elapsed_seconds",
              "unsigned_versions", "would_lose_trust", "keys", "fatal"]:
    assert field in r, field
assert r["exit_code"] == 0, r["exit_code"]
assert r["repository"] == root, r["repository"]

at = r["audited_at"]
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", at["utc"]), at
assert abs(at["unix_seconds"] - time.time()) < 600, at
assert time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at["unix_seconds"])) == at["utc"], at

tool = r["tool"]
assert tool["name"] == "fdl-mirror" and tool["version"] == tool_version, tool
assert tool["libssh"] and tool["openssl"] and isinstance(tool["duckdb"], bool), tool

policy = r["policy"]
assert policy["signatures"] == "required" and policy["namespace"] == "fdl", policy
assert policy["allowed_signers"] == {"path": signers, "sha256": signers_sha256}, policy

# The refs as they lie on disk, and HEAD.
on_disk = {}
for kind in ["heads", "tags"]:
    for name in os.listdir(os.path.join(root, "refs", kind)):
        on_disk[f"refs/{kind}/{name}"] = open(os.path.join(root, "refs", kind, name)).read().strip()
assert r["refs"] == on_disk, (r["refs"], on_disk)
assert r["head"] == "refs/heads/main", r["head"]

listed = 0
def check_files(files):
    global listed
    for f in files:
        path = os.path.join(root, f["path"])
        assert f["ok"], f
        assert f["size"] == size(path), (f, size(path))
        if f["sha256"] is not None:
            assert f["sha256"] == sha256sum(path), (f, sha256sum(path))
        listed += 1

check_files(r["files"])
assert [f["path"] for f in r["files"]] == ["fdl.json", "HEAD", "refs.json"], r["files"]
assert all(f["sha256"] for f in r["files"]), r["files"]

assert len(r["versions"]) == 4, len(r["versions"])
for v in r["versions"]:
    folder = f"versions/{v['id']}/"
    files = {f["path"]: f for f in v["files"]}
    check_files(v["files"])
    assert v["signer"]["fingerprint"] == fingerprint, v["signer"]
    assert v["signer"]["principals"] == "alice@example.org" and v["signer"]["key_type"] == "ssh-ed25519", v["signer"]
    assert files[folder + "version.json"]["vouched_by"] == "version.json.sig", files[folder + "version.json"]
    assert files[folder + "version.json.sig"]["vouched_by"] == "computed", files[folder + "version.json.sig"]
    record = json.load(open(os.path.join(root, folder, "version.json")))
    digests = v["sha256"]
    assert digests["version.json"] == sha256sum(os.path.join(root, folder, "version.json")), digests
    assert digests["version.json.sig"] == sha256sum(os.path.join(root, folder, "version.json.sig")), digests
    for role, field in [("catalog", "catalog"), ("dataset.json", "dataset"), ("files.json", "files")]:
        pinned = record[field]
        entry = files[folder + pinned["path"]]
        assert entry["vouched_by"] == "version.json" and entry["sha256"] == pinned["sha256"], (entry, pinned)
        assert digests[role] == pinned["sha256"], (digests, pinned)
    # Every data file files.json names is in the manifest (a build with DuckDB takes them from
    # the catalog, which agrees with files.json here).
    index = json.load(open(os.path.join(root, folder, record["files"]["path"])))
    data_dir = json.load(open(os.path.join(root, "fdl.json"))).get("data_dir", "data/")
    needed = {data_dir + p for t in index["tables"].values() for f in t["files"]
              for p in [f["path"]] + ([f["deletes"]["path"]] if f.get("deletes") else [])}
    data = {p: f for p, f in files.items() if f["role"] == "data_file"}
    assert set(data) == needed, (set(data), needed)
    assert len(data) == v["data_files"], v
    for f in data.values():
        if ledger == "yes":
            assert f["vouched_by"] == "ledger" and f["sha256"], f
        else:
            assert f["vouched_by"] in ("catalog", "files.json") and f["sha256"] is None, f
print(f"{listed} manifest entries match the files on disk")
PY
}

expect_status 0 "verify --json of the mirror" -- "$FDL_MIRROR" verify "$mirror" --allowed-signers "$signers" --json
cp "$work/out" "$work/mirror.json"
check_report "$work/mirror.json" "$mirror" yes && pass || fail "the mirror's report does not match its files"

expect_status 0 "verify --json of the origin" -- "$FDL_MIRROR" verify "$origin" --allowed-signers "$signers" --json
cp "$work/out" "$work/origin.json"
check_report "$work/origin.json" "$origin" no && pass || fail "the origin's report does not match its files"

# The summary: the policy with the keys' digest (abbreviated), and the refs.
main_tip=$(cat "$mirror/refs/heads/main")
record_sha256=$(sha256sum "$mirror/versions/$main_tip/version.json" | cut -d' ' -f1)
expect_status 0 "verify's summary" -- "$FDL_MIRROR" verify "$mirror" --allowed-signers "$signers"
expect_output "policy: signatures required, namespace fdl, allowed_signers $signers (sha256 ${signers_sha256:0:12}…)" \
  "the policy line names the keys' file and its digest"
expect_output "ref refs/heads/main -> $main_tip" "the summary lists the refs"
expect_output "HEAD -> refs/heads/main" "the summary shows HEAD"
! grep -qF "$signers_sha256" "$work/out" && pass || fail "a whole digest without --full-digests"

# --full-digests: every digest whole, and each file examined.
expect_status 0 "verify --full-digests" -- "$FDL_MIRROR" verify "$mirror" --allowed-signers "$signers" --full-digests
expect_output "allowed_signers $signers (sha256 $signers_sha256)" "the keys' digest whole"
expect_output "versions/$main_tip/version.json: $(stat -c %s "$mirror/versions/$main_tip/version.json") bytes, sha256 $record_sha256 (version.json.sig)" \
  "version.json's digest whole, vouched for by its signature"
data_file=data/main/population/ducklake-0001.parquet
expect_output "$data_file: $(stat -c %s "$mirror/$data_file") bytes, sha256 $(sha256sum "$mirror/$data_file" | cut -d' ' -f1) (ledger)" \
  "a data file's digest, as the ledger pins it and the audit hashed it"

# verify --config: the configuration's allowed_signers file is named, with its digest.
cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
defaults: { signatures: required }
repositories:
  - name: population
    origin: $origin
    mirror: $mirror
    allowed_signers: $signers
YAML
expect_status 0 "verify --config --json" -- "$FDL_MIRROR" verify --config "$work/mirror.yaml" --repository population --json
python3 - "$work/out" "$signers" "$signers_sha256" <<'PY' && pass || fail "verify --config names another allowed_signers file"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["policy"]["allowed_signers"] == {"path": sys.argv[2], "sha256": sys.argv[3]}, r["policy"]
assert r["policy"]["signatures"] == "required", r["policy"]
PY

# Without keys: the policy is off and names no file.
expect_status 0 "verify --json without keys" -- "$FDL_MIRROR" verify "$mirror" --signatures off --json
python3 - "$work/out" <<'PY' && pass || fail "a report without keys names a policy other than off"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["policy"] == {"signatures": "off", "namespace": "fdl", "allowed_signers": None}, r["policy"]
for v in r["versions"]:
    sig = [f for f in v["files"] if f["role"] == "version.json.sig"]
    assert len(sig) == 1 and sig[0]["vouched_by"] == "observed" and sig[0]["sha256"] is None, sig
PY

# A line of allowed_signers that does not parse is skipped, as ssh-keygen skips it, and said
# loudly: the warning names file:line and the reason, in verify's summary and in --json's
# warnings, and on stderr of check-signature and find-principals (whose stdout stays
# ssh-keygen's). The good line still trusts alice.
typo_signers=$work/keys/allowed_signers_with_typos
{
  echo "bob@example.org frobnicate $(cut -d' ' -f1,2 "$work/keys/alice.pub")"
  cat "$signers"
  echo "carol@example.org namespaces=\"fdl $(cut -d' ' -f1,2 "$work/keys/alice.pub")"
} >"$typo_signers"
skipped="(this line of allowed_signers is skipped: it grants nothing)"
first_warning="$typo_signers:1: unknown option 'frobnicate' $skipped"
third_warning="$typo_signers:3: unterminated quote in the options $skipped"
expect_status 0 "verify with malformed lines beside a good one" -- "$FDL_MIRROR" verify "$mirror" --allowed-signers "$typo_signers"
for w in "$first_warning" "$third_warning"; do
  grep -qxF "warning: $w" "$work/out" && pass || fail "verify's summary lacks the warning '$w'"
done
expect_status 0 "verify --json with malformed lines beside a good one" -- "$FDL_MIRROR" verify "$mirror" --allowed-signers "$typo_signers" --json
python3 - "$work/out" "$first_warning" "$third_warning" "$skipped" <<'PY' && pass || fail "verify --json's warnings lack the skipped lines"
import json, sys
r = json.load(open(sys.argv[1]))
first, third, skipped = sys.argv[2:]
assert [w for w in r["warnings"] if w.endswith(" " + skipped)] == [first, third], r["warnings"]
assert r["exit_code"] == 0 and all(v["signer"]["principals"] == "alice@example.org" for v in r["versions"]), r
PY
# Only the malformed line: nothing is trusted, and the warning says why.
head -1 "$typo_signers" >"$work/keys/only_typo"
expect_status 1 "verify when the only line is malformed" -- "$FDL_MIRROR" verify "$mirror" --allowed-signers "$work/keys/only_typo" --json
python3 - "$work/out" "$work/keys/only_typo:1: unknown option 'frobnicate' $skipped" <<'PY' && pass || fail "verify --json without a good line lacks the warning"
import json, sys
r = json.load(open(sys.argv[1]))
assert sys.argv[2] in r["warnings"], r["warnings"]
PY
version_dir=$mirror/versions/$main_tip
expect_status 0 "check-signature with malformed lines beside a good one" -- "$FDL_MIRROR" check-signature -f "$typo_signers" \
  -I alice@example.org -n fdl -s "$version_dir/version.json.sig" <"$version_dir/version.json"
for w in "$first_warning" "$third_warning"; do
  grep -qxF "warning: $w" "$work/err" && pass || fail "check-signature's stderr lacks '$w'"
done
! grep -q "^warning:" "$work/out" && pass || fail "check-signature warned on stdout"
expect_status 0 "find-principals with malformed lines beside a good one" -- "$FDL_MIRROR" find-principals -f "$typo_signers" \
  -s "$version_dir/version.json.sig"
for w in "$first_warning" "$third_warning"; do
  grep -qxF "warning: $w" "$work/err" && pass || fail "find-principals' stderr lacks '$w'"
done
[ "$(cat "$work/out")" = alice@example.org ] && pass || fail "find-principals' stdout is not the principal alone: $(cat "$work/out")"
finish
