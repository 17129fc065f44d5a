# The endpoints fit for a network (issue 33, section 4): the exporter-toolkit web
# configuration (web_config_file: or --web.config.file) puts TLS and basic authentication
# in front of /metrics, /status, /healthz, /readyz and POST /trigger. A real Prometheus
# (Debian's, which scripts/setup unpacks) scrapes over TLS with basic authentication and
# with a client certificate; plain HTTP, a wrong password and a missing one are refused,
# and Prometheus's own target states say so. The file is read again when it changes: client
# certificates become required (with client_allowed_sans) without a restart, and a broken
# change keeps the last good configuration. `trigger` speaks TLS with the credentials of
# its environment, and says which to set when they are missing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

# --- a CA, the daemon's certificate, two client certificates, a bcrypt hash ---------------
cd "$work"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=test-ca -days 2 \
  -keyout ca.key -out ca.pem 2>/dev/null
issue() { # issue NAME SUBJECT_ALT_NAMES EXTENDED_KEY_USAGE
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf 'subjectAltName=%s\nextendedKeyUsage=%s\n' "$2" "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile "$1.ext" -out "$1.pem" 2>/dev/null
}
issue server "IP:127.0.0.1,DNS:localhost" serverAuth
issue scraper "DNS:prometheus.example" clientAuth
issue stranger "DNS:other.example" clientAuth
cd - >/dev/null
hash=$("$python" -W ignore -c 'import crypt; print(crypt.crypt("scrape-secret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
case "$hash" in '$2'*) pass ;; *) fail "python's crypt made no bcrypt hash: $hash" ;; esac

web_tls_basic() {
  cat <<YAML
tls_server_config:
  cert_file: server.pem
  key_file: server.key
basic_auth_users:
  prometheus: '$hash'
http_server_config:
  headers:
    X-Content-Type-Options: nosniff
YAML
}
web_tls_basic >"$work/web.yml"

# The daemon takes the file from --web.config.file; the commands (check-config, trigger)
# from the configuration's web_config_file.
sample_config
{ cat "$work/mirror.yaml"; echo "web_config_file: web.yml"; } >"$work/with-web.yaml"
expect_status 0 "check-config of a configuration with a web configuration" -- \
  "$FDL_MIRROR" check-config --config "$work/with-web.yaml"
expect_output "(TLS, basic authentication (1 user))" "check-config says how the endpoints are served"

# A web configuration that does not load is a configuration problem, named with its place:
# check-config and run refuse it (exit 78).
printf 'tls_server_config:\n  cert_file: server.pem\n  key_file: nowhere.key\nbasic_auth_users:\n  prometheus: plain-text-password\n' \
  >"$work/broken-web.yml"
expect_status 78 "check-config --web.config.file of a broken file" -- \
  "$FDL_MIRROR" check-config --config "$work/mirror.yaml" --web.config.file "$work/broken-web.yml"
expect_output "broken-web.yml:5:15: basic_auth_users: user 'prometheus': the value is not a bcrypt hash" \
  "the hash problem is named with its place"
grep -q plain-text-password "$work/err" && fail "check-config printed the value given as a hash" || pass
printf 'tls_server_config:\n  cert_file: server.pem\n  key_file: nowhere.key\n' >"$work/no-key-web.yml"
expect_status 78 "run with a web configuration whose key does not exist" -- \
  timeout 20 "$FDL_MIRROR" run --config "$work/mirror.yaml" --web.config.file "$work/no-key-web.yml"
expect_output "key_file $work/nowhere.key: cannot read it" "the missing key is named"

daemon_args=(--web.config.file "$work/web.yml")
start_daemon "$work/mirror.yaml"
wait_for_log 10 "the listen line says TLS and basic authentication" 0 "TLS, basic authentication (1 user)"
https() { # https PATH [CURL ARGS...]: the status code of a request over TLS (000: no answer)
  local path=$1
  shift
  curl -s -o "$work/body" -D "$work/headers" -w '%{http_code}' --max-time 5 --cacert "$work/ca.pem" "$@" \
    "https://127.0.0.1:$daemon_port$path" || true
}
[ "$(https /metrics -u prometheus:scrape-secret)" = 200 ] && grep -q '^fdl_mirror_' "$work/body" && pass ||
  fail "the right password over TLS does not get /metrics"
grep -qi '^X-Content-Type-Options: nosniff' "$work/headers" && pass || fail "the configured header is not sent"
[ "$(https /metrics)" = 401 ] && grep -qi '^WWW-Authenticate: Basic' "$work/headers" && pass ||
  fail "a request without credentials is not 401 with WWW-Authenticate"
[ "$(https /metrics -u prometheus:wrong)" = 401 ] && pass || fail "a wrong password is not 401"
[ "$(https /metrics -u nobody:scrape-secret)" = 401 ] && pass || fail "an unknown user is not 401"
[ "$(https /healthz)" = 401 ] && pass || fail "/healthz answers without credentials"
[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$daemon_port/metrics" || true)" != 200 ] &&
  pass || fail "plain HTTP still gets /metrics"
[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -u prometheus:scrape-secret \
  "https://127.0.0.1:$daemon_port/metrics" || true)" = 000 ] && pass ||
  fail "a client that does not trust the test CA got an answer"

# --- a real Prometheus scrapes it ---------------------------------------------------------
cat >"$work/prometheus.yml" <<YAML
global: { scrape_interval: 1s, scrape_timeout: 1s }
scrape_configs:
  - job_name: tls_basic
    scheme: https
    tls_config: { ca_file: $work/ca.pem }
    basic_auth: { username: prometheus, password: scrape-secret }
    static_configs: [ { targets: [ "127.0.0.1:$daemon_port" ] } ]
  - job_name: client_cert
    scheme: https
    tls_config: { ca_file: $work/ca.pem, cert_file: $work/scraper.pem, key_file: $work/scraper.key }
    basic_auth: { username: prometheus, password: scrape-secret }
    static_configs: [ { targets: [ "127.0.0.1:$daemon_port" ] } ]
  - job_name: wrong_password
    scheme: https
    tls_config: { ca_file: $work/ca.pem }
    basic_auth: { username: prometheus, password: not-the-secret }
    static_configs: [ { targets: [ "127.0.0.1:$daemon_port" ] } ]
  - job_name: plain_http
    static_configs: [ { targets: [ "127.0.0.1:$daemon_port" ] } ]
YAML
start_prometheus "$work/prometheus.yml"

# targets_are JOB=up|down... : Prometheus's own view of each job's target, after a scrape.
targets_are() {
  prometheus_api /api/v1/targets >"$work/targets.json" || return 1
  "$python" - "$work/targets.json" "$@" <<'PY'
import json, sys
targets = {t["labels"]["job"]: t for t in json.load(open(sys.argv[1]))["data"]["activeTargets"]}
for want in sys.argv[2:]:
    job, health = want.split("=")
    if targets.get(job, {}).get("health") != health:
        sys.exit(1)
PY
}
wait_until 30 "Prometheus scrapes over TLS with basic authentication and with a client certificate, not without" \
  "targets_are tls_basic=up client_cert=up wrong_password=down plain_http=down"
"$python" - "$work/targets.json" <<'PY' && pass || fail "the refused scrapes do not say why: $(cat "$work/targets.json")"
import json, sys
targets = {t["labels"]["job"]: t for t in json.load(open(sys.argv[1]))["data"]["activeTargets"]}
assert "401" in targets["wrong_password"]["lastError"], targets["wrong_password"]["lastError"]
assert targets["plain_http"]["lastError"], targets["plain_http"]
PY
prometheus_api '/api/v1/query?query=fdl_mirror_build_info' >"$work/query.json"
"$python" - "$work/query.json" <<'PY' && pass || fail "the scraped series are not in Prometheus: $(cat "$work/query.json")"
import json, sys
jobs = {r["metric"]["job"] for r in json.load(open(sys.argv[1]))["data"]["result"]}
assert {"tls_basic", "client_cert"} <= jobs and not jobs & {"wrong_password", "plain_http"}, jobs
PY

# --- trigger over TLS ---------------------------------------------------------------------
sed "s/^listen: .*/listen: 127.0.0.1:$daemon_port/" "$work/with-web.yaml" >"$work/cli.yaml"
expect_status 78 "trigger without credentials" -- "$FDL_MIRROR" trigger --config "$work/cli.yaml"
expect_output "set FDL_MIRROR_WEB_USER and FDL_MIRROR_WEB_PASSWORD" "trigger says what to set"
expect_status 69 "trigger with a wrong password" -- env FDL_MIRROR_WEB_USER=prometheus FDL_MIRROR_WEB_PASSWORD=wrong \
  "$FDL_MIRROR" trigger --config "$work/cli.yaml" --repository population
expect_output "the daemon answered 401" "trigger shows the refusal"
expect_status 0 "trigger over TLS with basic authentication" -- \
  env FDL_MIRROR_WEB_USER=prometheus FDL_MIRROR_WEB_PASSWORD=scrape-secret \
  "$FDL_MIRROR" trigger --config "$work/cli.yaml" --repository population
expect_output "population: pass started at" "the pass started"

# --- the file changes: client certificates become required, no restart ----------------------
log_before=$(log_length)
{
  web_tls_basic | sed '/^basic_auth_users:/,$d'
  cat <<YAML
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.pem
  client_allowed_sans: [ prometheus.example ]
basic_auth_users:
  prometheus: '$hash'
YAML
} >"$work/web.yml.new"
mv "$work/web.yml.new" "$work/web.yml"
wait_until 10 "a TLS handshake without a client certificate fails once the file asks for one" \
  "[ \"\$(https /metrics -u prometheus:scrape-secret)\" = 000 ]"
wait_for_log 5 "the reload is logged" "$log_before" "web configuration reloaded from $work/web.yml (TLS, basic authentication)"
[ "$(https /metrics -u prometheus:scrape-secret --cert "$work/scraper.pem" --key "$work/scraper.key")" = 200 ] && pass ||
  fail "the allowed client certificate is refused"
[ "$(https /metrics -u prometheus:scrape-secret --cert "$work/stranger.pem" --key "$work/stranger.key")" = 000 ] && pass ||
  fail "a certificate of the CA without an allowed SAN got an answer"
[ "$(https /metrics --cert "$work/scraper.pem" --key "$work/scraper.key")" = 401 ] && pass ||
  fail "a client certificate alone passes basic authentication"
wait_until 30 "Prometheus's client-certificate job stays up, the other goes down" \
  "targets_are tls_basic=down client_cert=up"
expect_status 78 "trigger without a client certificate where one is required" -- \
  env FDL_MIRROR_WEB_USER=prometheus FDL_MIRROR_WEB_PASSWORD=scrape-secret "$FDL_MIRROR" trigger --config "$work/cli.yaml"
expect_output "set FDL_MIRROR_WEB_CLIENT_CERT and FDL_MIRROR_WEB_CLIENT_KEY" "trigger says what to set"
expect_status 0 "trigger with a client certificate" -- \
  env FDL_MIRROR_WEB_USER=prometheus FDL_MIRROR_WEB_PASSWORD=scrape-secret \
  FDL_MIRROR_WEB_CLIENT_CERT="$work/scraper.pem" FDL_MIRROR_WEB_CLIENT_KEY="$work/scraper.key" \
  "$FDL_MIRROR" trigger --config "$work/cli.yaml" --repository population

# --- a broken change: the last good configuration stays in force ------------------------------
log_before=$(log_length)
echo "tls_server_config: [ this is not a mapping" >"$work/web.yml"
wait_for_log 10 "a change that does not load is logged" "$log_before" "web configuration changed but does not load"
[ "$(https /metrics -u prometheus:scrape-secret --cert "$work/scraper.pem" --key "$work/scraper.key")" = 200 ] && pass ||
  fail "the last good configuration is not in force after a broken change"
[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$daemon_port/metrics" || true)" != 200 ] &&
  pass || fail "a broken change fell back to plain HTTP"
[ "$(https /metrics --cert "$work/scraper.pem" --key "$work/scraper.key")" = 401 ] && pass ||
  fail "a broken change dropped basic authentication"
grep -q "$hash" "$daemon_log" && fail "the log shows a password hash" || pass

stop_daemon TERM 10
finish
