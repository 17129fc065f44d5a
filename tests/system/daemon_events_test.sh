# Passes driven by webhooks (issue 35): POST /hooks/REPOSITORY on the events' own listener,
# signed with the repository's secret. A good one starts a pass at once (the interval is an
# hour) and is counted; a replayed, stale, unsigned, badly signed or unknown one is 401 and
# counted by reason, and starts nothing. A change a pass finds without an event is recorded
# (FdlMirrorEventsMissing's clock) and kept across a restart. check-config refuses a listener
# beyond loopback without TLS, a repository without its secret, a secrets file others read,
# and warns about one secret shared by two repositories.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

secret=webhook-secret-0123456789
write_webhook_secret population "$secret"
"$FDL_PUBLISHER" sample "$work/origin" >/dev/null
write_config() {
  cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
defaults: { interval: 1h, signatures: off }
events: { listen: "$1", secrets_file: $work/events.yaml, timestamp_window: 5m }
repositories:
  - { name: population, origin: $work/origin, mirror: $work/mirror, events: [ webhook ] }
  - { name: other, origin: $work/origin, mirror: $work/other }
YAML
}
write_config 127.0.0.1:0
expect_status 0 "check-config" -- "$FDL_MIRROR" check-config --config "$work/mirror.yaml"

start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' == 1 30 "the first pass"
[ -n "$(events_port)" ] && pass || fail "no events listener in the log"
expect_metric 'fdl_mirror_events_expected{repo="population"}' == 1 "population takes events"
expect_series 'fdl_mirror_events_expected{repo="other"}' == 0 "other takes none"

# A new version, announced by a signed webhook: the pass starts at once.
new=$("$FDL_PUBLISHER" add "$work/origin" main 100)
sent=$EPOCHREALTIME
status=$(send_webhook population "$secret")
[ "$status" = 202 ] && pass || fail "a signed webhook: HTTP $status, want 202: $(cat "$work/webhook.out")"
wait_until 30 "the webhook's pass moved main" '[ "$(ref_of "$work/mirror" refs/heads/main)" = "$new" ]'
echo "from the webhook to the mirror's main moved: $(seconds_since "$sent") s"
wait_for_metric 'fdl_mirror_passes_started_by_events_total{repo="population"}' == 1 10 "counted as started by an event"
expect_metric 'fdl_mirror_events_accepted_total{repo="population",source="webhook"}' == 1 "accepted"
last_event=$(metric 'fdl_mirror_last_event_timestamp_seconds{repo="population"}')
awk -v t="$last_event" -v s="${sent%.*}" 'BEGIN { exit !(t >= s - 1) }' && pass || fail "last event at $last_event"

# Refused, each with its reason, and none starts a pass.
webhook_body='{"ref":"refs/heads/main","delivery":2}'
ts=$(date +%s)
good=sha256=$(printf '%s./hooks/population.%s' "$ts" "$webhook_body" | openssl dgst -sha256 -hmac "$secret" | sed 's/.*= //')
[ "$(send_webhook population "$secret" "$ts" "$webhook_body" "$good")" = 202 ] && pass || fail "a second webhook"
[ "$(send_webhook population "$secret" "$ts" "$webhook_body" "$good")" = 401 ] && pass || fail "a replay is not 401"
[ "$(send_webhook population "$secret" "$ts" "$webhook_body" -)" = 401 ] && pass || fail "unsigned is not 401"
[ "$(send_webhook population "wrong-secret-0123456789")" = 401 ] && pass || fail "a wrong secret is not 401"
[ "$(send_webhook population "$secret" "$((ts - 3600))")" = 401 ] && pass || fail "an hour-old one is not 401"
[ "$(send_webhook nobody "$secret")" = 401 ] && pass || fail "an unknown repository is not 401"
[ "$(send_webhook other "$secret")" = 401 ] && pass || fail "a repository without webhooks is not 401"
scrape
expect_metric 'fdl_mirror_events_refused_total{reason="replayed",source="webhook"}' == 1 "the replay counted"
expect_metric 'fdl_mirror_events_refused_total{reason="missing_signature",source="webhook"}' == 1 "unsigned counted"
expect_metric 'fdl_mirror_events_refused_total{reason="bad_signature",source="webhook"}' == 1 "bad signature counted"
expect_metric 'fdl_mirror_events_refused_total{reason="stale_timestamp",source="webhook"}' == 1 "stale counted"
expect_metric 'fdl_mirror_events_refused_total{reason="unknown_repository",source="webhook"}' == 2 "unknown counted"
expect_metric 'fdl_mirror_events_received_total{source="webhook"}' == 8 "every request counted as received"
grep -q nobody "$daemon_log" && fail "a sender's repository name was logged" || pass
grep -qF "$secret" "$daemon_log" && fail "the secret was logged" || pass

# The events' listener serves the events alone; the daemon's endpoints serve no hook.
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$(events_port)/metrics" || true)
[ "$code" = 405 ] && pass || fail "GET /metrics on the events' listener: HTTP $code, want 405"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "http://127.0.0.1:$(events_port)/metrics" || true)
[ "$code" = 404 ] && pass || fail "POST /metrics on the events' listener: HTTP $code, want 404"
[ "$(http_status /hooks/population)" = 404 ] && pass || fail "the daemon's endpoints serve /hooks"

# A change found by a pass no event asked for: the clock FdlMirrorEventsMissing reads.
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' == 3 30 "the second webhook's pass"
expect_metric 'fdl_mirror_unannounced_change_timestamp_seconds{repo="population"}' == 0 "every change announced so far"
"$FDL_PUBLISHER" add "$work/origin" main 100 >/dev/null
before_trigger=$(date +%s)
curl -fsS --max-time 5 -X POST "$(url "/trigger?repository=population")" >/dev/null && pass || fail "POST /trigger"
wait_for_metric 'fdl_mirror_unannounced_change_timestamp_seconds{repo="population"}' '>=' "$before_trigger" 30 \
  "an unannounced change recorded"
unannounced=$(metric 'fdl_mirror_unannounced_change_timestamp_seconds{repo="population"}')
last_event=$(metric 'fdl_mirror_last_event_timestamp_seconds{repo="population"}')

# Both clocks survive a restart.
stop_daemon
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_unannounced_change_timestamp_seconds{repo="population"}' == "$unannounced" 30 "kept"
expect_metric 'fdl_mirror_last_event_timestamp_seconds{repo="population"}' == "$last_event" "the last event kept"
stop_daemon

# What check-config refuses.
write_config 0.0.0.0:0
expect_status 78 "a listener beyond loopback without TLS" -- "$FDL_MIRROR" check-config --config "$work/mirror.yaml"
expect_output "events: listen 0.0.0.0:0 reaches beyond this host: it needs TLS" "says why"
write_config 127.0.0.1:0
printf 'webhooks:\n  other: %s\n' "$secret" >"$work/events.yaml"
expect_status 78 "a repository without its secret" -- "$FDL_MIRROR" check-config --config "$work/mirror.yaml"
expect_output "repository 'population': events: webhook, but $work/events.yaml has no secret for it" "names it"
chmod 644 "$work/events.yaml"
expect_status 78 "a secrets file others may read" -- "$FDL_MIRROR" check-config --config "$work/mirror.yaml"
expect_output "others may read or write it (mode 644)" "says why"
grep -qF "$secret" "$work/out" "$work/err" && fail "check-config showed a secret" || pass
# One secret for two repositories passes, with a warning that names them, not the secret.
printf 'webhooks:\n  population: %s\n  other: %s\n' "$secret" "$secret" >"$work/events.yaml"
chmod 600 "$work/events.yaml"
expect_status 0 "a secret shared by two repositories is allowed" -- "$FDL_MIRROR" check-config --config "$work/mirror.yaml"
expect_output "repositories 'other', 'population' share one webhook secret" "warns, naming both"
grep -qF "$secret" "$work/out" "$work/err" && fail "check-config showed a shared secret" || pass
finish
