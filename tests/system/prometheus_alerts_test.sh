# The shipped alert rules in a real Prometheus (issue 33, "Done when"): two daemons share
# twelve-odd repositories on Ceph RGW under leases, scraped every second by Debian's
# Prometheus with the shipped rules (their durations shortened in a copy: `for:` to 6 s,
# `keep_firing_for:` to 20 s, thresholds of 30 and 60 minutes to 8 s). Each failure class is
# driven for real: an origin unreachable from the start and one that goes down later; a
# version unsigned, signed by an untrusted key, and with a tampered signature; a version
# rewritten and a tag moved at the origin; a mirror whose server stops answering; a reload
# refused; a daemon killed and restarted; and a failover (the daemon killed for good). A
# sampler reads Prometheus's own /api/v1/alerts every second, and the timeline shows that
# each intended alert fires, on the right labels (a repository's without `instance`), once:
# its activeAt never changes and it never leaves the list until the end, across the restart
# and the failover. Issue 34's alerts too: the attestations of a repository whose origin
# went down stop (FdlMirrorAttestationsStopped, continued by whoever holds it next from the
# attestation in the mirror), and a peer mirror tampered with diverges (FdlMirrorPeerDivergence).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"
tools=$SOURCE_DIR/tests/system/ha_tools.py

start_rgw fleet
mkdir -p "$work/origins" "$work/keys"
ssh-keygen -q -t ed25519 -N '' -C trusted -f "$work/keys/trusted"
ssh-keygen -q -t ed25519 -N '' -C stranger -f "$work/keys/stranger"
echo "ops@example.org namespaces=\"fdl\" $(cut -d' ' -f1,2 "$work/keys/trusted.pub")" >"$work/keys/allowed_signers"

plain_repos=(later rewritten moved lake)
signed_repos=(unsigned stranger tampered)
for r in "${plain_repos[@]}" regions; do "$FDL_PUBLISHER" sample "$work/origins/$r" >/dev/null; done
# `regions` has a peer mirror (in another region, say) whose first version.json was replaced.
"$FDL_MIRROR" sync "$work/origins/regions" "$work/peer-regions" --signatures off >/dev/null
printf ' ' >>"$work/peer-regions/versions/$(ls "$work/origins/regions/versions" | sort | head -n 1)/version.json"
ssh-keygen -q -t ed25519 -N '' -C mirror -f "$work/keys/mirror"
for r in "${signed_repos[@]}"; do
  "$FDL_PUBLISHER" sample "$work/origins/$r" >/dev/null
  for v in "$work/origins/$r"/versions/*; do ssh-keygen -Y sign -q -f "$work/keys/trusted" -n fdl "$v/version.json"; done
done

# The origin of `later` is served by nginx, stopped later: an origin that goes down.
start_nginx "$work/origins"
# The mirror of `lake` goes through a proxy that is stopped later: its server stops answering.
"$python" "$tools" proxy "$work/lake.proxy-port" "$s3_port" "$work/lake.requests.jsonl" &
lake_proxy=$!
bg_pids+=("$lake_proxy")
wait_until 10 "the proxy listens" '[ -f "$work/lake.proxy-port" ]'

declare -A port pid log
port[a]=$(free_port)
port[b]=$(free_port)
write_config() { # write_config DAEMON [EXTRA LINE]
  cat >"$work/$1.yaml" <<YAML
listen: 127.0.0.1:${port[$1]}
state_dir: $work/state-$1
shutdown_timeout: 5s
coordination:
  mode: leases
  instance: $1
  members: s3://fleet/members/
  lease_duration: 10s
  max_clock_skew: 1s
  heartbeat_interval: 2s
defaults: { interval: 1s, jitter: 0%, signatures: off, backoff_max: 2s }
# The alert's threshold is three intervals without an attestation. At 1 s, a loaded machine
# (a second test on both cores) delayed passes and their attestations past 3 s while the
# origin was still up, FdlMirrorAttestationsStopped went pending, and the timeline saw it
# show twice (2026-12-07, with and without that day's changes). At 4 s: 12 s of slack.
attestation: { key_file: $work/keys/mirror, interval: 4s, validity: 24s }
stores:
  - { match: s3://fleet/, endpoint: "http://127.0.0.1:$s3_port", region: us-east-1, addressing: path,
      credentials_file: $work/s3-credentials, allow_plain_http: true }
  - { match: s3://fleet/lake/, endpoint: "http://127.0.0.1:$(cat "$work/lake.proxy-port")", region: us-east-1,
      addressing: path, credentials_file: $work/s3-credentials, allow_plain_http: true }
  - { match: "http://127.0.0.1:$nginx_port/", allow_plain_http: true }
repositories:
  - { name: nowhere, origin: $work/origins/nowhere, mirror: s3://fleet/nowhere/ }
  - { name: later, origin: "http://127.0.0.1:$nginx_port/later/", mirror: s3://fleet/later/ }
  - { name: rewritten, origin: $work/origins/rewritten, mirror: s3://fleet/rewritten/, recheck_interval: 0s }
  - { name: moved, origin: $work/origins/moved, mirror: s3://fleet/moved/ }
  - { name: lake, origin: $work/origins/lake, mirror: s3://fleet/lake/ }
  - { name: regions, origin: $work/origins/regions, mirror: s3://fleet/regions/, peers: [ $work/peer-regions ],
      compare_interval: 1s }
YAML
  for r in "${signed_repos[@]}"; do
    echo "  - { name: $r, origin: $work/origins/$r, mirror: s3://fleet/$r/, signatures: required, allowed_signers: keys/allowed_signers }" >>"$work/$1.yaml"
  done
}
start_named() { # start_named DAEMON
  start_daemon "$work/$1.yaml"
  pid[$1]=$daemon_pid log[$1]=$daemon_log
}
write_config a
write_config b
start_named a
start_named b

# Prometheus, with the shipped rules made quick.
sed -e 's/^\( *for: \)[0-9]*[mh]$/\16s/' -e 's/^\( *keep_firing_for: \)[0-9]*m\(.*\)$/\120s/' \
  -e 's/> 1800)/> 8)/; s/> 1800$/> 8/; s/> 3600)/> 8)/; s/> 3600$/> 8/' -e 's/\[1h\]/[10m]/g' \
  "$SOURCE_DIR/systemd/fdl-mirror.rules.yml" >"$work/rules.yml"
grep -q 'for: 6s' "$work/rules.yml" && ! grep -qE 'for: [0-9]+[mh]$|> (1800|3600)' "$work/rules.yml" && pass ||
  fail "the rules were not all shortened: $(grep -nE 'for: [0-9]+[mh]$|> (1800|3600)' "$work/rules.yml")"
cat >"$work/prometheus.yml" <<YAML
global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }
rule_files: [ $work/rules.yml ]
scrape_configs:
  - job_name: fdl-mirror
    static_configs: [ { targets: [ "127.0.0.1:${port[a]}", "127.0.0.1:${port[b]}" ] } ]
YAML
start_prometheus "$work/prometheus.yml"

# The sampler: Prometheus's alerts every second, one JSON line each, until told to stop.
"$python" - "$prometheus_port" "$work/alerts.jsonl" "$work/sampler.stop" <<'PY' &
import json, os, sys, time, urllib.request
port, out, stop = sys.argv[1:]
with open(out, "w") as f:
    while not os.path.exists(stop):
        try:
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/alerts", timeout=2).read()
            f.write(json.dumps({"t": time.time(), "alerts": json.loads(body)["data"]["alerts"]}) + "\n")
            f.flush()
        except Exception as e:  # a slow answer is a missed sample, not a failure
            pass
        time.sleep(1)
PY
sampler=$!
bg_pids+=("$sampler")

# prometheus_value QUERY: the first value of an instant query, or "".
prometheus_value() {
  prometheus_api "/api/v1/query" --get --data-urlencode "query=$1" 2>/dev/null |
    "$python" -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
wait_until 60 "every healthy repository mirrored, as Prometheus sees it" \
  '[ "$(prometheus_value "count(max by (repo) (fdl_mirror_ref_in_sync{repo=~\"later|rewritten|moved|lake|unsigned|stranger|tampered|regions\",ref=\"refs/heads/main\"}) == 1)")" = 8 ]'
wait_until 30 "the origin of later attested while it is up" \
  '[ -n "$(prometheus_value "fdl_mirror_attestation_timestamp_seconds{repo=\"later\"}")" ]'

# --- the failures ------------------------------------------------------------------------
stop_nginx                                                                # an origin goes down
stage "$work/origins/unsigned"; "$FDL_PUBLISHER" add "$work/stage" main 1000 >/dev/null
install_staged "$work/origins/unsigned"                                   # a version unsigned
stage "$work/origins/stranger"; "$FDL_PUBLISHER" add "$work/stage" main 1000 --sign "$work/keys/stranger" >/dev/null
install_staged "$work/origins/stranger"                                   # signed by an untrusted key
stage "$work/origins/tampered"
version=$("$FDL_PUBLISHER" add "$work/stage" main 1000 --sign "$work/keys/trusted")
echo "another text" >"$work/other" && ssh-keygen -Y sign -q -f "$work/keys/trusted" -n fdl "$work/other"
cp "$work/other.sig" "$work/stage/versions/$version/version.json.sig"     # a signature of other bytes
install_staged "$work/origins/tampered"
tag=$(ref_of "$work/origins/moved" refs/tags/v1)
set_ref "$work/origins/moved" refs/tags/v1 "$(ref_of "$work/origins/moved" refs/heads/main)"   # a tag moved
dataset=$work/origins/rewritten/versions/$(ref_of "$work/origins/rewritten" refs/tags/v1)/dataset.json
{ cat "$dataset"; echo ' '; } | replace_file "$dataset"                   # a published version rewritten
stop_process "$lake_proxy"                                                # the mirror's server stops answering
write_config b && echo "repositories: [ broken" >>"$work/b.yaml" && kill -HUP "${pid[b]}"   # a reload refused

# alert_is NAME LABELS: Prometheus shows alert NAME firing with labels holding LABELS (a JSON object).
alert_is() {
  prometheus_api /api/v1/alerts 2>/dev/null | "$python" -c '
import json, sys
want_name, want = sys.argv[1], json.loads(sys.argv[2])
alerts = json.load(sys.stdin)["data"]["alerts"]
sys.exit(0 if any(a["labels"].get("alertname") == want_name and a["state"] == "firing"
                  and all(a["labels"].get(k) == v for k, v in want.items()) for a in alerts) else 1)' "$1" "$2"
}
expected=(
  'FdlMirrorOriginUnreachable {"repo":"nowhere"}'
  'FdlMirrorPassesFailing {"repo":"nowhere"}'
  'FdlMirrorOriginUnreachable {"repo":"later"}'
  'FdlMirrorVersionsHeld {"repo":"unsigned","reason":"verify.missing_signature"}'
  'FdlMirrorSignatureFailure {"repo":"stranger"}'
  'FdlMirrorVersionsHeld {"repo":"stranger","reason":"verify.untrusted_key"}'
  'FdlMirrorSignatureFailure {"repo":"tampered"}'
  'FdlMirrorImmutabilityViolation {"repo":"rewritten","kind":"version_rewritten"}'
  'FdlMirrorImmutabilityViolation {"repo":"moved","kind":"tag_moved"}'
  'FdlMirrorMirrorUnreachable {"repo":"lake"}'
  'FdlMirrorReloadRefused {"instance":"127.0.0.1:'"${port[b]}"'"}'
  'FdlMirrorAttestationsStopped {"repo":"later"}'
  'FdlMirrorPeerDivergence {"repo":"regions","peer":"'"$work/peer-regions"'"}'
)
for e in "${expected[@]}"; do
  wait_until 90 "$e fires" "alert_is ${e%% *} '${e#* }'" || true
done

# --- a daemon killed and restarted at once, then killed for good (a failover) -------------
kill -KILL "${pid[a]}"
wait "${pid[a]}" 2>/dev/null || true
start_named a
sleep 12
kill -KILL "${pid[a]}"
wait "${pid[a]}" 2>/dev/null || true
date +%s.%N >"$work/failover.t" # a is gone for good from here
# b takes every lease it can (a's heartbeat and leases run out within 10 s + 1 s + 2 s):
# all but lake's, whose mirror does not answer.
wait_until 60 "b holds every repository but lake" \
  '[ "$(curl -fsS --max-time 2 "http://127.0.0.1:${port[b]}/metrics" | awk "/^fdl_mirror_lease_held\\{/ { s += \$NF } END { print s + 0 }")" = 8 ]' || true
wait_until 30 "FdlMirrorDown fires for the daemon gone" "alert_is FdlMirrorDown '{\"instance\":\"127.0.0.1:${port[a]}\"}'" || true
# Longer than keep_firing_for (20 s here): an alert still firing at the end is b's finding,
# not one kept firing from a's series.
sleep 25
touch "$work/sampler.stop"
wait "$sampler" 2>/dev/null || true

# --- the timeline ------------------------------------------------------------------------
printf '%s\n' "${expected[@]}" 'FdlMirrorDown {"instance":"127.0.0.1:'"${port[a]}"'"}' >"$work/expected"
expect_status 0 "each alert fired once, on its labels, and stayed through the restart and the failover" -- \
  "$python" - "$work/alerts.jsonl" "$work/expected" "$(cat "$work/failover.t")" <<'PY'
import json, sys
all_samples = [json.loads(line) for line in open(sys.argv[1])]
failover = float(sys.argv[3])
problems = []
per_repo = {"FdlMirrorOriginUnreachable", "FdlMirrorPassesFailing", "FdlMirrorVersionsHeld",
            "FdlMirrorSignatureFailure", "FdlMirrorImmutabilityViolation", "FdlMirrorMirrorUnreachable",
            "FdlMirrorAttestationsStopped", "FdlMirrorPeerDivergence"}
for line in open(sys.argv[2]).read().splitlines():
    name, want = line.split(" ", 1)
    want = json.loads(want)
    # The daemon down is the one killed for good: the scrape that fails while the first kill
    # restarts it may show the alert pending for a moment, which is not what is checked.
    samples = [s for s in all_samples if s["t"] >= failover] if name == "FdlMirrorDown" else all_samples
    def matches(a):
        return a["labels"].get("alertname") == name and all(a["labels"].get(k) == v for k, v in want.items())
    seen = [(s["t"], [a for a in s["alerts"] if matches(a)]) for s in samples]
    present = [(t, found) for t, found in seen if found]
    if not present:
        problems.append(f"{name} {want}: never in Prometheus's alerts")
        continue
    identities = {json.dumps(a["labels"], sort_keys=True) for _, found in present for a in found}
    if len(identities) != 1:
        problems.append(f"{name} {want}: {len(identities)} label sets: {sorted(identities)}")
    if name in per_repo and any("instance" in json.loads(i) for i in identities):
        problems.append(f"{name} {want}: a repository's alert carries instance: {sorted(identities)}")
    active_at = {a["activeAt"] for _, found in present for a in found}
    if len(active_at) != 1:
        problems.append(f"{name} {want}: fired anew ({len(active_at)} activeAt: {sorted(active_at)})")
    first = present[0][0]
    gaps = [t for t, found in seen if t > first and not found]
    if gaps:
        problems.append(f"{name} {want}: left the alerts {len(gaps)} time(s) after it first showed (at {gaps[0]:.0f})")
    firing = [t for t, found in present if any(a["state"] == "firing" for a in found)]
    if not firing:
        problems.append(f"{name} {want}: pending, never firing")
    start = all_samples[0]["t"]
    print(f"{name} {want}: first at {first - start:.0f} s, firing at "
          f"{(firing[0] - start) if firing else -1:.0f} s, {len(present)} samples, one activeAt")
print(f"{len(all_samples)} samples over {all_samples[-1]['t'] - all_samples[0]['t']:.0f} s")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY
cat "$work/out"
finish
