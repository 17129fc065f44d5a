# Passes driven by S3 bucket notifications, end to end on Ceph RGW (issue 35): an origin in
# RGW whose bucket has a notification configuration naming an SNS topic with an HTTP push
# endpoint, the daemon's events' listener (`/events/s3?token=…`). A version published into
# the origin reaches the daemon as event records (the writes of its ref, refs.json, HEAD),
# which start a pass at once though the interval is an hour; the records of the other
# writes are ignored. A wrong token is refused. Prints the time from the publication to the
# mirror's ref moved (bench/events_bench.sh measures it over many rounds).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

start_rgw origins
publish() {
  with_s3 "$FDL_MIRROR" sync "$work/origin" s3://origins/repo/ --allow-plain-http --signatures off >"$work/publish.out" 2>&1 ||
    fail "publishing into RGW: $(tail -n 3 "$work/publish.out")"
}
"$FDL_PUBLISHER" sample "$work/origin" >/dev/null
publish

token=token-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
printf 's3_token: %s\n' "$token" >"$work/events.yaml"
chmod 600 "$work/events.yaml"
cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
defaults: { interval: 1h, signatures: off }
events: { listen: 127.0.0.1:0, secrets_file: $work/events.yaml }
stores:
  - match: s3://origins/
    endpoint: http://127.0.0.1:$s3_port
    region: us-east-1
    addressing: path
    credentials_file: $work/s3-credentials
    allow_plain_http: true
repositories:
  - { name: population, origin: "s3://origins/repo/", mirror: $work/mirror, events: [ s3 ] }
YAML
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' == 1 60 "the first pass"
port=$(events_port)

# The topic (SNS API, signed as S3 is) pushing to the daemon, and the bucket's notification
# configuration for the repository's prefix. (DeleteObjects crashes RGW 16.2 on a bucket
# with notifications: nothing here sends it.)
topic=$(curl -sS -f --aws-sigv4 aws:amz:us-east-1:sns --user "$s3_access_key:$s3_secret_key" \
  --data-urlencode Action=CreateTopic --data-urlencode Name=fdl-mirror-events \
  --data-urlencode Attributes.entry.1.key=push-endpoint \
  --data-urlencode "Attributes.entry.1.value=http://127.0.0.1:$port/events/s3?token=$token" \
  "http://127.0.0.1:$s3_port/" | sed -n 's:.*<TopicArn>\(.*\)</TopicArn>.*:\1:p')
[ -n "$topic" ] && pass || fail "RGW created no topic"
cat >"$work/notification.xml" <<XML
<NotificationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <TopicConfiguration>
    <Id>fdl-mirror</Id>
    <Topic>$topic</Topic>
    <Event>s3:ObjectCreated:*</Event>
    <Event>s3:ObjectRemoved:*</Event>
    <Filter><S3Key><FilterRule><Name>prefix</Name><Value>repo/</Value></FilterRule></S3Key></Filter>
  </TopicConfiguration>
</NotificationConfiguration>
XML
curl -sS -f -X PUT --aws-sigv4 aws:amz:us-east-1:s3 --user "$s3_access_key:$s3_secret_key" \
  -H "x-amz-content-sha256: $(sha256sum "$work/notification.xml" | cut -d' ' -f1)" \
  --data-binary @"$work/notification.xml" "http://127.0.0.1:$s3_port/origins?notification=" >/dev/null &&
  pass || fail "the bucket's notification configuration was refused"

# A version published into RGW: its writes notify the daemon, which mirrors it at once.
new=$("$FDL_PUBLISHER" add "$work/origin" main 100)
started=$EPOCHREALTIME
publish
published=$EPOCHREALTIME
wait_until 30 "the notified pass moved main" '[ "$(ref_of "$work/mirror" refs/heads/main)" = "$new" ]'
echo "publication took $(awk -v a="$started" -v b="$published" 'BEGIN { printf "%.3f", b - a }') s; the mirror's main moved $(seconds_since "$published") s after it ended"
scrape
expect_metric 'fdl_mirror_events_accepted_total{repo="population",source="s3"}' '>=' 1 "the ref's records accepted"
expect_metric 'fdl_mirror_passes_started_by_events_total{repo="population"}' '>=' 1 "a pass started by an event"
expect_metric 'fdl_mirror_events_ignored_total{source="s3"}' '>=' 4 "the data files' and catalogs' records ignored"
[ "$(metric 'fdl_mirror_events_refused_total{reason="bad_token",source="s3"}')" = absent ] && pass ||
  fail "RGW's pushes were refused"
expect_metric 'fdl_mirror_unannounced_change_timestamp_seconds{repo="population"}' == 0 "the change was announced"

# A tag deleted at the origin (one DELETE): its record starts a pass, which keeps the tag.
mark=$(log_length)
curl -sS -f -X DELETE --aws-sigv4 aws:amz:us-east-1:s3 --user "$s3_access_key:$s3_secret_key" \
  -H 'x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' \
  "http://127.0.0.1:$s3_port/origins/repo/refs/tags/v1" >/dev/null && pass || fail "the tag was not deleted"
wait_for_log 30 "the deletion's pass" "$mark" "refs/tags/v1: gone from the origin; the mirror keeps it at"

# A push with a wrong token: refused, counted, nothing started.
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'Content-Type: application/json' \
  --data-binary '{"Records":[]}' "http://127.0.0.1:$port/events/s3?token=wrong-$token" || true)
[ "$code" = 401 ] && pass || fail "a wrong token: HTTP $code, want 401"
scrape
expect_metric 'fdl_mirror_events_refused_total{reason="bad_token",source="s3"}' == 1 "the wrong token counted"
finish
