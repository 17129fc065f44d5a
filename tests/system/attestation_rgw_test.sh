# Attestations on Ceph RGW (issue 34, "done when"): the daemon mirrors a signed repository
# into RGW and attests it; `verify --attestation-signers` accepts the mirror (and audits the
# rest); `ssh-keygen -Y verify` accepts the signature over DSSE's pre-authentication bytes on
# its own; with the daemon stopped, an attestation put back over a newer one is refused as
# stale, a ref changed in the mirror after the attestation is named, and once the validity
# window passes the mirror is refused (expired, and stale under --max-age); a rotation to a
# new key through valid-after is refused before the boundary and accepted after it; and
# `compare` of the origin, the attested mirror (a version.json replaced) and a mirror behind,
# all in RGW, names both.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

origin=$work/origin
mkdir -p "$work/keys"
ssh-keygen -q -t ed25519 -N '' -C publisher -f "$work/keys/publisher"
echo "ops@example.org namespaces=\"fdl\" $(cut -d' ' -f1,2 "$work/keys/publisher.pub")" >"$work/keys/origin.allowed_signers"
"$FDL_PUBLISHER" sample "$origin" --sign "$work/keys/publisher" >/dev/null
ssh-keygen -q -t ed25519 -N '' -C mirror-old -f "$work/keys/mirror-old"
ssh-keygen -q -t ecdsa -N '' -C mirror-new -f "$work/keys/mirror-new"
install -m 0600 "$work/keys/mirror-old" "$work/attestation-key"

start_rgw mirror
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION \
  AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE
export HOME=$work
mirror_url=s3://mirror/population/

cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
shutdown_timeout: 5s
defaults: { interval: 1s, jitter: 0%, signatures: required, backoff_max: 2s }
attestation:
  key_file: $work/attestation-key
  interval: 2s
  validity: 8s
repositories:
  - name: population
    origin: $origin
    mirror: $mirror_url
    allowed_signers: $work/keys/origin.allowed_signers
stores:
  - match: s3://mirror/
    endpoint: http://127.0.0.1:$s3_port
    region: us-east-1
    addressing: path
    credentials_file: $work/s3-credentials
    allow_plain_http: true
YAML

# rgw OBJECT [FILE]: GET the mirror's OBJECT to stdout, or PUT FILE there.
rgw() {
  local url="http://127.0.0.1:$s3_port/mirror/population/$1"
  if [ $# -eq 1 ]; then
    curl -sS -f --aws-sigv4 aws:amz:us-east-1:s3 --user "$s3_access_key:$s3_secret_key" \
      -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$url"
  else
    curl -sS -f -X PUT --aws-sigv4 aws:amz:us-east-1:s3 --user "$s3_access_key:$s3_secret_key" \
      -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" --data-binary "@$2" "$url" >/dev/null
  fi
}
# consumer_line KEY OPTIONS: a line of the consumers' allowed_signers for KEY (its .pub).
consumer_line() { echo "mirror@example.org namespaces=\"fdl-mirror-attestation\"$2 $(cut -d' ' -f1,2 "$1.pub")"; }
consumer_line "$work/keys/mirror-old" "" >"$work/consumer.allowed_signers"
# check EXIT DESCRIPTION ARGS...: verify of the S3 mirror with the consumer's keys.
check() {
  local want=$1 what=$2
  shift 2
  expect_status "$want" "$what" -- env AWS_ACCESS_KEY_ID="$s3_access_key" AWS_SECRET_ACCESS_KEY="$s3_secret_key" \
    AWS_REGION=us-east-1 AWS_ENDPOINT_URL="http://127.0.0.1:$s3_port" "$FDL_MIRROR" verify "$mirror_url" \
    --allow-plain-http "$@"
}
attested_at() { rgw .fdl-mirror/attestation.json | python3 -c '
import base64, json, sys
print(json.loads(base64.b64decode(json.load(sys.stdin)["payload"]))["predicate"]["attested_at"])'; }

start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_attestation_timestamp_seconds{repo="population"}' '>' 0 60 "the mirror attested"
expect_metric 'fdl_mirror_attestation_failures_total{repo="population"}' == 0 "no attestation failed"
check 0 "the consumer accepts the mirror, and verify audits the rest" \
  --attestation-signers "$work/consumer.allowed_signers" --max-age 30s --allowed-signers "$work/keys/origin.allowed_signers"
expect_output "attestation: accepted: signed by mirror@example.org" "names the attestation's signer"
expect_output "3 ref(s) and 4 version(s) as attested" "every ref and version checked"
expect_output "4 version(s) audited, 0 failed" "and the mirror audited"

# --- OpenSSH alone, over the pre-authentication encoding (docs/attestations.md) ---------------
rgw .fdl-mirror/attestation.json >"$work/attestation.json"
python3 - "$work/attestation.json" "$work" <<'PY'
import base64, json, sys, textwrap
envelope = json.load(open(sys.argv[1]))
payload = base64.b64decode(envelope["payload"])
kind = envelope["payloadType"].encode()
open(sys.argv[2] + "/pae", "wb").write(b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload))
sig = "\n".join(textwrap.wrap(envelope["signatures"][0]["sig"], 70))
open(sys.argv[2] + "/pae.sig", "w").write("-----BEGIN SSH SIGNATURE-----\n" + sig + "\n-----END SSH SIGNATURE-----\n")
PY
expect_status 0 "ssh-keygen -Y verify accepts the signature over the PAE bytes" -- \
  ssh-keygen -Y verify -f "$work/consumer.allowed_signers" -I mirror@example.org -n fdl-mirror-attestation \
  -s "$work/pae.sig" <"$work/pae"
older=$work/attestation.json

# A newer attestation, then the daemon stopped: what follows is the mirror left alone.
before=$(metric 'fdl_mirror_attestation_timestamp_seconds{repo="population"}')
wait_for_metric 'fdl_mirror_attestation_timestamp_seconds{repo="population"}' '>' "$before" 15 "attested again"
stop_daemon
expect_clean_exit "stopped"
rgw .fdl-mirror/attestation.json >"$work/newest.json"
[ "$(attested_at)" != "$(python3 -c 'import base64,json,sys; print(json.loads(base64.b64decode(json.load(open(sys.argv[1]))["payload"]))["predicate"]["attested_at"])' "$older")" ] &&
  pass || fail "the daemon's second attestation is dated as the first"

# --- replay: the older attestation put back ---------------------------------------------------
sleep 1
rgw .fdl-mirror/attestation.json "$older"
check 1 "an attestation put back over a newer one is refused under --max-age" \
  --attestation-signers "$work/consumer.allowed_signers" --max-age 1s --attestation-only
expect_output "attestation.stale: attestation: made at" "as stale"
rgw .fdl-mirror/attestation.json "$work/newest.json"

# --- a ref changed in the mirror after the attestation ---------------------------------------
rgw refs/heads/main >"$work/main"
printf '%s' "$(ls "$origin/versions" | sort | head -n 1)" >"$work/first"
rgw refs/heads/main "$work/first"
check 1 "a ref moved in the mirror is found" --attestation-signers "$work/consumer.allowed_signers" --attestation-only
expect_output "attestation.mismatch: attestation: refs/heads/main: names $(cat "$work/first") in the mirror" \
  "and named, with both versions"
rgw refs/heads/main "$work/main"
check 0 "the ref put back, the mirror is as attested" --attestation-signers "$work/consumer.allowed_signers" \
  --attestation-only

# --- the daemon stopped: the window passes ------------------------------------------------------
expires=$(python3 -c 'import base64,calendar,json,sys,time
p = json.loads(base64.b64decode(json.load(open(sys.argv[1]))["payload"]))["predicate"]
print(calendar.timegm(time.strptime(p["expires"], "%Y-%m-%dT%H:%M:%SZ")))' "$work/newest.json")
while [ "$(date +%s)" -le "$expires" ]; do sleep 0.5; done
check 1 "a mirror whose daemon stopped is refused once its validity passes" \
  --attestation-signers "$work/consumer.allowed_signers" --max-age 5s --attestation-only
expect_output "attestation.expired: attestation: expired at" "as expired"
expect_output "attestation.stale: attestation: made at" "and as stale under --max-age"

# --- key rotation through valid-after, on the daemon's own key file ------------------------------
boundary=$(($(date +%s) + 20))
stamp() { date -u -d "@$1" +%Y%m%d%H%M%SZ; }
{ consumer_line "$work/keys/mirror-old" ",valid-before=\"$(stamp $((boundary + 60)))\""
  consumer_line "$work/keys/mirror-new" ",valid-after=\"$(stamp "$boundary")\""; } >"$work/rotation.allowed_signers"
restarted=$(date +%s)
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_attestation_timestamp_seconds{repo="population"}' '>=' "$restarted" 30 "attested after the restart"
check 0 "before the boundary, the old key's attestation is accepted" \
  --attestation-signers "$work/rotation.allowed_signers" --attestation-only
install -m 0600 "$work/keys/mirror-new" "$work/attestation-key"
new_fingerprint=$(ssh-keygen -lf "$work/keys/mirror-new.pub" | cut -d' ' -f2)
wait_until 20 "an attestation signed with the new key" 'rgw .fdl-mirror/attestation.json | grep -qF "$new_fingerprint"'
if [ "$(date +%s)" -lt "$boundary" ]; then
  check 1 "before the boundary, the new key's attestation is refused" \
    --attestation-signers "$work/rotation.allowed_signers" --attestation-only
  expect_output "attestation.untrusted_key" "as signed by a key not yet valid"
else
  fail "the rotation test took past its boundary before the new key signed (a slow machine?)"
fi
while [ "$(date +%s)" -le "$boundary" ]; do sleep 0.5; done
check 0 "after the boundary, the new key's attestation is accepted" \
  --attestation-signers "$work/rotation.allowed_signers" --attestation-only
expect_output "attestation: accepted: signed by mirror@example.org ($new_fingerprint)" "signed by the new key"
stop_daemon
expect_clean_exit "stopped at the end"

# --- compare on RGW: the origin, the mirror tampered with, and a mirror behind --------------
expect_status 0 "a second mirror, in the same RGW" -- with_s3 "$FDL_MIRROR" sync "$origin" s3://mirror/behind/ \
  --allow-plain-http --allowed-signers "$work/keys/origin.allowed_signers"
"$FDL_PUBLISHER" add "$origin" main 100 --sign "$work/keys/publisher" >/dev/null
expect_status 0 "the attested mirror takes the new version" -- with_s3 "$FDL_MIRROR" sync "$origin" "$mirror_url" \
  --allow-plain-http --allowed-signers "$work/keys/origin.allowed_signers"
first=$(cat "$work/first")
rgw "versions/$first/version.json" >"$work/record"
printf ' ' >>"$work/record"
rgw "versions/$first/version.json" "$work/record"
expect_status 1 "compare names the tampered mirror and the one behind" -- \
  with_s3 "$FDL_MIRROR" compare "$origin" "$mirror_url" s3://mirror/behind/ --allow-plain-http
expect_output "divergence: versions/$first/version.json: the same version with other bytes" "the tampered version"
expect_output " at $mirror_url" "in the tampered mirror"
expect_output "lag: refs/heads/main: s3://mirror/behind/ is 1 version(s) behind" "and the mirror behind"
expect_status 1 "the attestation names the tampered version too" -- \
  with_s3 "$FDL_MIRROR" verify "$mirror_url" --allow-plain-http --attestation-signers "$work/rotation.allowed_signers" \
  --attestation-only
expect_output "attestation.mismatch: attestation: versions/$first/version.json" "as a mismatch"
finish
