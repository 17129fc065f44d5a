# Mirrors compared (issue 34): `fdl-mirror compare` of an origin and two mirrors, one
# tampered with (a version.json replaced) and one behind, names both (a divergence, exit 1;
# lag, exit 1 past --max-lag); its JSON says the same; two mirrors' ledgers that record a
# data file with other bytes diverge; a mirror's attestation stands for its
# records when trusted. The daemon, with `peers:`, compares its own folder mirror (which it
# attests) with both: fdl_mirror_peer_divergence and fdl_mirror_peer_versions_behind say so,
# and the shipped rules fire on what it exported (promtool).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

origin=$work/origin
"$FDL_PUBLISHER" sample "$origin" >/dev/null
expect_status 0 "sync mirror a" -- "$FDL_MIRROR" sync "$origin" "$work/a" --signatures off
expect_status 0 "sync mirror b" -- "$FDL_MIRROR" sync "$origin" "$work/b" --signatures off
old_main=$(cat "$origin/refs/heads/main")
"$FDL_PUBLISHER" add "$origin" main 100 >/dev/null
new_main=$("$FDL_PUBLISHER" add "$origin" main 100)
expect_status 0 "sync mirror a again (b stays behind)" -- "$FDL_MIRROR" sync "$origin" "$work/a" --signatures off

expect_status 0 "three copies on one line: lag alone is not a failure" -- \
  "$FDL_MIRROR" compare "$origin" "$work/a" "$work/b"
expect_output "lag: refs/heads/main: $work/b is 2 version(s) behind (at $old_main; $origin, $work/a at $new_main)" \
  "names the copy behind, by how much"
expect_output "result: 0 divergence(s)" "no divergence"
expect_status 1 "past --max-lag" -- "$FDL_MIRROR" compare "$origin" "$work/a" "$work/b" --max-lag 1
expect_output "over --max-lag 1" "says the bound is passed"
expect_status 0 "within --max-lag" -- "$FDL_MIRROR" compare "$origin" "$work/a" "$work/b" --max-lag 2

# A version.json replaced in mirror a: the same version id with other bytes.
tampered=$(ls "$origin/versions" | sort | head -n 1)
printf ' ' >>"$work/a/versions/$tampered/version.json"
expect_status 1 "a tampered mirror is a divergence" -- "$FDL_MIRROR" compare "$origin" "$work/a" "$work/b"
expect_output "divergence: versions/$tampered/version.json: the same version with other bytes: sha256 " "names the version"
expect_output " at $work/a" "and the copy that differs"
expect_output "lag: refs/heads/main: $work/b is 2 version(s) behind" "and still the lag"
expect_status 1 "the JSON report" -- "$FDL_MIRROR" compare "$origin" "$work/a" "$work/b" --json
python3 - "$work/out" "$work/b" <<'PY' && pass || fail "the JSON report does not say what the summary says"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["exit_code"] == 1, report
assert len(report["divergences"]) == 1, report["divergences"]
b = [l for l in report["locations"] if l["location"] == sys.argv[2]][0]
assert b["most_behind"] == 2, b
main = [r for r in report["refs"] if r["name"] == "refs/heads/main"][0]
assert main["behind"] == [0, 0, 2], main
PY
# Mirrors' ledgers record each data file's digest as copied: compared too.
cp -a "$work/b" "$work/b2"
python3 - "$work/b2/.fdl-mirror/ledger" <<'PY' && pass || fail "no ledger segment to change"
import json, os, sys
folder = sys.argv[1]
name = sorted(os.listdir(folder))[0]
segment = json.load(open(os.path.join(folder, name)))
path = sorted(segment["data_files"])[0]
segment["data_files"][path]["sha256"] = "0" * 64
json.dump(segment, open(os.path.join(folder, name), "w"))
open(os.path.join(os.path.dirname(folder), "changed-path"), "w").write(path)
PY
expect_status 1 "a data file recorded with other bytes by two mirrors' ledgers" -- "$FDL_MIRROR" compare "$work/b" "$work/b2"
expect_output "divergence: data file $(cat "$work/b2/.fdl-mirror/changed-path"): recorded with other bytes by the ledgers" \
  "names the data file"
expect_output "data file(s) recorded by more than one mirror's ledger" "counts the data files compared"
expect_status 2 "one location is a usage error" -- "$FDL_MIRROR" compare "$origin"
expect_output "compare needs two LOCATIONs or more" "says why"
expect_status 3 "a location that cannot be read" -- "$FDL_MIRROR" compare "$origin" "$work/nothing-here"

# --- the daemon: its own mirror attested, compared with its peers ---------------------------
mkdir -p "$work/keys"
ssh-keygen -q -t ed25519 -N '' -C mirror -f "$work/keys/mirror"
echo "mirror@example.org namespaces=\"fdl-mirror-attestation\" $(cut -d' ' -f1,2 "$work/keys/mirror.pub")" \
  >"$work/keys/consumers"
cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
shutdown_timeout: 5s
attestation: { key_file: $work/keys/mirror, interval: 1s, validity: 1h }
defaults: { interval: 1s, jitter: 0%, signatures: off, compare_interval: 1s, peer_max_lag: 1 }
repositories:
  - name: population
    origin: $origin
    mirror: $work/c
    peers: [ $work/a, $work/b ]
YAML
start_daemon "$work/mirror.yaml"
wait_for_metric "fdl_mirror_peer_divergence{repo=\"population\",peer=\"$work/a\"}" == 1 30 "the tampered peer diverges"
expect_metric "fdl_mirror_peer_versions_behind{repo=\"population\",peer=\"$work/b\"}" == 2 "the peer behind, by 2"
expect_metric "fdl_mirror_peer_divergence{repo=\"population\",peer=\"$work/b\"}" == 0 "the peer behind does not diverge"
expect_metric "fdl_mirror_peer_up{repo=\"population\",peer=\"$work/a\"}" == 1 "peer a read"
expect_metric 'fdl_mirror_peer_max_lag_versions{repo="population"}' == 1 "the bound exported"
wait_for_metric 'fdl_mirror_attestation_timestamp_seconds{repo="population"}' '>' 0 30 "the folder mirror attested"
[ "$(log_lines_with 0 repo=population "peer $work/a diverges from the mirror: versions/$tampered/version.json")" -ge 1 ] &&
  pass || fail "the divergence is logged with the version"
expect_status 0 "a consumer accepts the daemon's folder mirror" -- \
  "$FDL_MIRROR" verify "$work/c" --attestation-signers "$work/keys/consumers" --attestation-only --max-age 1m
expect_status 0 "compare takes the mirror's attestation for its records" -- \
  "$FDL_MIRROR" compare "$origin" "$work/c" --attestation-signers "$work/keys/consumers"
expect_output "[2] $work/c: repository 5f0c8a52-6d3e-4f8e-9b1a-2c7d4e9f0a13, 6 version(s), 3 ref(s), from its attestation" \
  "the attested mirror read from its attestation"
scrape
divergence=$(metric "fdl_mirror_peer_divergence{repo=\"population\",peer=\"$work/a\"}")
behind=$(metric "fdl_mirror_peer_versions_behind{repo=\"population\",peer=\"$work/b\"}")
stop_daemon
expect_clean_exit "stopped"

# The shipped rules on what the daemon exported.
rules_test_preamble "$work/alerts/peers.test.yml"
cat >>"$work/alerts/peers.test.yml" <<YAML
      - series: 'fdl_mirror_peer_divergence{job="fdl-mirror",instance="m:9464",repo="population",peer="$work/a"}'
        values: '0x2 ${divergence}x40'
      - series: 'fdl_mirror_peer_versions_behind{job="fdl-mirror",instance="m:9464",repo="population",peer="$work/b"}'
        values: '${behind}x40'
      - series: 'fdl_mirror_peer_max_lag_versions{job="fdl-mirror",instance="m:9464",repo="population"}'
        values: '1x40'
    alert_rule_test:
      - eval_time: 4m
        alertname: FdlMirrorPeerDivergence
        exp_alerts:
          - exp_labels: { severity: critical, job: fdl-mirror, repo: population, peer: "$work/a" }
            exp_annotations:
              summary: "fdl-mirror: $work/a diverges from the mirror of population"
              description: "The last comparison of the mirror of repository population (job fdl-mirror) with its peer $work/a found 1 divergence(s): the same version with other bytes, a tag naming another version, or a branch off the mirror's line."
              runbook_url: docs/operations.md#fdlmirrorpeerdivergence
      - eval_time: 31m
        alertname: FdlMirrorPeerBehind
        exp_alerts:
          - exp_labels: { severity: warning, job: fdl-mirror, repo: population, peer: "$work/b" }
            exp_annotations:
              summary: "fdl-mirror: $work/b lags behind the mirror of population"
              description: "The peer $work/b of repository population (job fdl-mirror) is 2 version(s) behind this mirror on a ref, past peer_max_lag, for 30 minutes."
              runbook_url: docs/operations.md#fdlmirrorpeerbehind
YAML
expect_rules_test "$work/alerts/peers.test.yml" "FdlMirrorPeerDivergence and FdlMirrorPeerBehind fire on the daemon's metrics"
finish
