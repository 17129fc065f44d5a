#!/usr/bin/env bash
# From publication to mirrored (issue 35): a publisher adds a small version to an origin in
# Ceph RGW (a sync of a folder into it: data files, the version's folder, version.json, then
# its ref, refs.json and HEAD), and two daemons mirror that origin into folders side by
# side, in this one run:
#   events   interval 1h; the bucket's notifications (an SNS topic pushing to its events'
#            listener) start its passes
#   polling  interval POLL (default 30s, jitter 0%): what the same daemon does without events
# Each round waits a random part of POLL, publishes one version and times, for each daemon,
# from the end of the
# publication (its HEAD written) to the mirror's main naming the new version. Prints every
# round, then the median and the largest of each.
#
#   bench/events_bench.sh [ROUNDS] [POLL]   (default 10 and 30s, in seconds; needs a build and radosgw)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
poll=${2:-30s}
build=${FDL_MIRROR_BUILD_DIR:-build}
fdl_mirror=$PWD/$build/fdl-mirror
publisher=$PWD/$build/fdl-test-publisher
for tool in "$fdl_mirror" "$publisher"; do
  [ -x "$tool" ] || { echo "missing $tool: run scripts/setup" >&2; exit 2; }
done
command -v radosgw >/dev/null || { echo "missing radosgw: run scripts/setup" >&2; exit 2; }

work=$(mktemp -d /tmp/fdl-mirror-events-bench.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ ! -x "$work/rgw/stop-rgw.sh" ] || "$work/rgw/stop-rgw.sh" >/dev/null 2>&1 || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

printed=$(BASE="$work/rgw" bash scripts/deps/rgw/start-rgw.sh 2>"$work/rgw-start.log") ||
  { echo "Ceph RGW did not start:" >&2; tail -5 "$work/rgw-start.log" >&2; exit 3; }
endpoint=$(sed -n 's/^S3_ENDPOINT=//p' <<<"$printed")
key=$(sed -n 's/^S3_ACCESS_KEY=//p' <<<"$printed")
secret=$(sed -n 's/^S3_SECRET_KEY=//p' <<<"$printed")
printf 'access_key_id = %s\nsecret_access_key = %s\n' "$key" "$secret" >"$work/credentials"
curl -sS -f -X PUT --aws-sigv4 aws:amz:us-east-1:s3 --user "$key:$secret" \
  -H 'x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' "$endpoint/origins" >/dev/null
s3_env=(env AWS_ACCESS_KEY_ID="$key" AWS_SECRET_ACCESS_KEY="$secret" AWS_REGION=us-east-1 AWS_ENDPOINT_URL="$endpoint")
publish() { "${s3_env[@]}" "$fdl_mirror" sync "$work/origin" s3://origins/repo/ --signatures off --allow-plain-http >/dev/null; }
"$publisher" sample "$work/origin" >/dev/null
publish

token=token-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
printf 's3_token: %s\n' "$token" >"$work/secrets.yaml"
chmod 600 "$work/secrets.yaml"
events_port=$(free_port)
# start NAME INTERVAL EXTRA_TOP EXTRA_REPO: a daemon mirroring the origin into $work/NAME.
start() {
  cat >"$work/$1.yaml" <<YAML
listen: 127.0.0.1:$(free_port)
state_dir: $work/state-$1
$3
defaults: { interval: $2, jitter: 0%, signatures: off }
stores:
  - { match: "s3://origins/", endpoint: "$endpoint", region: us-east-1, addressing: path, credentials_file: $work/credentials, allow_plain_http: true }
repositories:
  - { name: bench, origin: "s3://origins/repo/", mirror: $work/$1 $4 }
YAML
  "$fdl_mirror" run --config "$work/$1.yaml" 2>"$work/$1.log" &
  pids+=($!)
}
start events 1h "events: { listen: 127.0.0.1:$events_port, secrets_file: $work/secrets.yaml }" ", events: [ s3 ]"
start polling "$poll" "" ""
main_of() { cat "$1/refs/heads/main" 2>/dev/null || true; }
for ((i = 0; i < 300; i++)); do
  [ "$(main_of "$work/events")" = "$(cat "$work/origin/refs/heads/main")" ] &&
    [ "$(main_of "$work/polling")" = "$(cat "$work/origin/refs/heads/main")" ] && break
  sleep 0.1
done

topic=$(curl -sS -f --aws-sigv4 aws:amz:us-east-1:sns --user "$key:$secret" \
  --data-urlencode Action=CreateTopic --data-urlencode Name=fdl-mirror-bench \
  --data-urlencode Attributes.entry.1.key=push-endpoint \
  --data-urlencode "Attributes.entry.1.value=http://127.0.0.1:$events_port/events/s3?token=$token" \
  "$endpoint/" | sed -n 's:.*<TopicArn>\(.*\)</TopicArn>.*:\1:p')
cat >"$work/notification.xml" <<XML
<NotificationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <TopicConfiguration><Id>bench</Id><Topic>$topic</Topic>
    <Event>s3:ObjectCreated:*</Event><Event>s3:ObjectRemoved:*</Event>
    <Filter><S3Key><FilterRule><Name>prefix</Name><Value>repo/</Value></FilterRule></S3Key></Filter>
  </TopicConfiguration>
</NotificationConfiguration>
XML
curl -sS -f -X PUT --aws-sigv4 aws:amz:us-east-1:s3 --user "$key:$secret" \
  -H "x-amz-content-sha256: $(sha256sum "$work/notification.xml" | cut -d' ' -f1)" \
  --data-binary @"$work/notification.xml" "$endpoint/origins?notification=" >/dev/null

echo "round  publication  events: mirrored after  polling ($poll): mirrored after"
poll_seconds=${poll%s}
for round in $(seq "$rounds"); do
  # At a random point of the polling daemon's interval, as a publisher's time would be: right
  # after its last poll, each round would measure its worst case.
  sleep "$(awk -v r="$RANDOM" -v p="$poll_seconds" 'BEGIN { printf "%.2f", r / 32768 * p }')"
  new=$("$publisher" add "$work/origin" main 4096)
  start_time=$EPOCHREALTIME
  publish
  published=$EPOCHREALTIME
  events_at='' polling_at=''
  while [ -z "$events_at" ] || [ -z "$polling_at" ]; do
    [ -n "$events_at" ] || { [ "$(main_of "$work/events")" != "$new" ] || events_at=$EPOCHREALTIME; }
    [ -n "$polling_at" ] || { [ "$(main_of "$work/polling")" != "$new" ] || polling_at=$EPOCHREALTIME; }
    sleep 0.01
  done
  awk -v r="$round" -v s="$start_time" -v p="$published" -v e="$events_at" -v q="$polling_at" \
    'BEGIN { printf "%5d  %9.3f s  %19.3f s  %27.3f s\n", r, p - s, e - p, q - p }' | tee -a "$work/rounds"
done
summary() { sort -n | awk '{ a[NR] = $1 } END { printf "median %.3f s, largest %.3f s", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), a[NR] }'; }
echo
echo "events:  $(awk '{ print $4 }' "$work/rounds" | summary) from the publication's end to the mirror's main moved"
echo "polling: $(awk '{ print $6 }' "$work/rounds" | summary) (interval $poll)"
