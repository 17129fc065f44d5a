# The events' listener beyond loopback (issue 35): only over TLS. With a web configuration
# that has tls_server_config, `events.listen` may name every address: the listener then
# speaks TLS with that certificate, and takes a signed webhook without the web
# configuration's basic authentication (which still guards /metrics); plain HTTP gets no
# answer from it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

cd "$work"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=test-ca -days 2 \
  -keyout ca.key -out ca.pem 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=server -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext \
  -out server.pem 2>/dev/null
cd - >/dev/null
hash=$("$python" -W ignore -c 'import crypt; print(crypt.crypt("scrape-secret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
cat >"$work/web.yaml" <<YAML
tls_server_config: { cert_file: server.pem, key_file: server.key }
basic_auth_users: { prometheus: '$hash' }
YAML
secret=webhook-secret-0123456789
write_webhook_secret population "$secret"
"$FDL_PUBLISHER" sample "$work/origin" >/dev/null
cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
web_config_file: $work/web.yaml
state_dir: $work/state
defaults: { interval: 1h, signatures: off }
events: { listen: "0.0.0.0:0", secrets_file: $work/events.yaml }
repositories:
  - { name: population, origin: $work/origin, mirror: $work/mirror, events: [ webhook ] }
YAML
expect_status 0 "check-config: beyond loopback, over TLS" -- "$FDL_MIRROR" check-config --config "$work/mirror.yaml"

start_daemon "$work/mirror.yaml"
wait_for_log 20 "the events' listener" 0 "events: listening on 0.0.0.0:"
port=$(grep -m1 -o 'events: listening on 0\.0\.0\.0:[0-9]*' "$daemon_log" | sed 's/.*://')
metrics_code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/ca.pem" "https://127.0.0.1:$daemon_port/metrics" || true)
[ "$metrics_code" = 401 ] && pass || fail "/metrics without credentials: HTTP $metrics_code, want 401"
wait_until 30 "the first pass" '[ -f "$work/mirror/refs/heads/main" ]'

new=$("$FDL_PUBLISHER" add "$work/origin" main 100)
ts=$(date +%s) body='{"ref":"main"}'
sig=sha256=$(printf '%s./hooks/population.%s' "$ts" "$body" | openssl dgst -sha256 -hmac "$secret" | sed 's/.*= //')
code=$(curl -s -o "$work/answer" -w '%{http_code}' --max-time 5 --cacert "$work/ca.pem" -H "X-Fdl-Timestamp: $ts" \
  -H "X-Hub-Signature-256: $sig" --data-binary "$body" "https://127.0.0.1:$port/hooks/population" || true)
[ "$code" = 202 ] && pass || fail "a signed webhook over TLS, without basic authentication: HTTP $code: $(cat "$work/answer")"
wait_until 30 "the webhook's pass moved main" '[ "$(ref_of "$work/mirror" refs/heads/main)" = "$new" ]'

code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H "X-Fdl-Timestamp: $ts" -H "X-Hub-Signature-256: $sig" \
  --data-binary "$body" "http://127.0.0.1:$port/hooks/population" || true)
[ "$code" = 000 ] && pass || fail "plain HTTP to the events' listener was answered: HTTP $code"
finish
