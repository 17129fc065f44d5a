#!/usr/bin/env bash
# What TLS and basic authentication cost a scrape (issue 33, section 4), side by side with
# nginx serving the same /metrics text behind the same TLS certificate and the same bcrypt
# hash (auth_basic, which checks it with the system's crypt, as the daemon does): for each,
# REQUESTS requests on one kept-alive connection (what Prometheus does between scrapes) and
# REQUESTS on a new connection each (a handshake each time), timed by one Python client, so
# the client's own cost is the same in every row. Also the daemon's CPU time over the run.
#
#   bench/endpoint_bench.sh [REQUESTS]    (default 300; needs a build and nginx: scripts/setup)
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-300}
build=${FDL_MIRROR_BUILD_DIR:-build}
fdl_mirror=$PWD/$build/fdl-mirror
publisher=$PWD/$build/fdl-test-publisher
for tool in "$fdl_mirror" "$publisher"; do
  [ -x "$tool" ] || { echo "missing $tool: run scripts/setup" >&2; exit 2; }
done
for tool in nginx openssl python3 curl; do
  command -v "$tool" >/dev/null || { echo "missing $tool: run scripts/setup" >&2; exit 2; }
done

work=$(mktemp -d /tmp/fdl-mirror-endpoint-bench.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

cd "$work"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=bench -days 2 \
  -addext "subjectAltName=IP:127.0.0.1" -keyout server.key -out server.pem 2>/dev/null
hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("scrape-secret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
printf 'tls_server_config: { cert_file: server.pem, key_file: server.key }\nbasic_auth_users: { prometheus: %s }\n' \
  "'$hash'" >web.yml
"$publisher" sample origin >/dev/null

# start_daemon NAME WEB_CONFIG_LINE: a daemon on a free port; prints the port.
start_daemon() {
  local port
  port=$(free_port)
  printf 'listen: 127.0.0.1:%s\nstate_dir: %s/state-%s\n%s\ndefaults: { interval: 1h, signatures: off }\nrepositories:\n  - { name: population, origin: %s/origin, mirror: %s/mirror-%s }\n' \
    "$port" "$work" "$1" "$2" "$work" "$work" "$1" >"$1.yaml"
  "$fdl_mirror" run --config "$1.yaml" 2>"$1.log" &
  pids+=($!)
  echo "$port $!"
}
read -r plain_port plain_pid < <(start_daemon plain "")
read -r tls_port tls_pid < <(start_daemon tls "web_config_file: web.yml")
for port in "$plain_port" "$tls_port"; do
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
done
curl -fsS "http://127.0.0.1:$plain_port/metrics" >metrics.txt

nginx_port=$(free_port)
printf 'prometheus:%s\n' "$hash" >htpasswd
chmod a+rx "$work" && chmod a+r htpasswd server.pem server.key   # nginx's workers run as nobody
mkdir -p html nginx && cp metrics.txt html/metrics
cat >nginx/nginx.conf <<NGINX
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
worker_processes 1;
events {}
http {
  access_log off;
  client_body_temp_path $work/nginx; proxy_temp_path $work/nginx; fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx; scgi_temp_path $work/nginx;
  server {
    listen 127.0.0.1:$nginx_port ssl;
    ssl_certificate $work/server.pem;
    ssl_certificate_key $work/server.key;
    root $work/html;
    auth_basic "bench";
    auth_basic_user_file $work/htpasswd;
    keepalive_requests 1000;
  }
}
NGINX
nginx -c "$work/nginx/nginx.conf" &
pids+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$nginx_port") 2>/dev/null && break; sleep 0.05; done

cpu_of() { awk '{ print ($14 + $15) }' "/proc/$1/stat"; }
tls_cpu_before=$(cpu_of "$tls_pid")
python3 - "$requests" "$work/server.pem" "$plain_port" "$tls_port" "$nginx_port" <<'PY'
import base64, http.client, ssl, statistics, sys, time
requests, ca, plain, tls, nginx = int(sys.argv[1]), sys.argv[2], *map(int, sys.argv[3:])
context = ssl.create_default_context(cafile=ca)
auth = {"Authorization": "Basic " + base64.b64encode(b"prometheus:scrape-secret").decode()}

def connect(port, secure):
    if secure:
        return http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    return http.client.HTTPConnection("127.0.0.1", port, timeout=10)

def get(connection, headers):
    connection.request("GET", "/metrics", headers=headers)
    response = connection.getresponse()
    body = response.read()
    assert response.status == 200, (response.status, body[:200])
    return len(body)

def timed(port, secure, headers, reuse):
    times, size = [], 0
    connection = connect(port, secure) if reuse else None
    for _ in range(requests):
        start = time.perf_counter()
        if not reuse:
            connection = connect(port, secure)
        size = get(connection, headers)
        if not reuse:
            connection.close()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), sorted(times)[int(len(times) * 0.95) - 1], size

rows = [("fdl-mirror, plain HTTP", plain, False, {}),
        ("fdl-mirror, TLS + basic authentication", tls, True, auth),
        ("nginx, TLS + basic authentication (same text)", nginx, True, auth)]
print(f"{requests} GET /metrics each; milliseconds per request, median and 95th percentile")
print(f"| server | body | kept-alive median | p95 | new connection each median | p95 |")
print(f"| --- | --- | --- | --- | --- | --- |")
for name, port, secure, headers in rows:
    get(connect(port, secure), headers)  # warm-up: the first bcrypt comparison, caches
    kept = timed(port, secure, headers, True)
    fresh = timed(port, secure, headers, False)
    print(f"| {name} | {kept[2]} B | {kept[0]:.2f} | {kept[1]:.2f} | {fresh[0]:.2f} | {fresh[1]:.2f} |")
PY
tls_cpu_after=$(cpu_of "$tls_pid")
echo "the TLS daemon's CPU time over its $((2 * requests + 1)) requests (and its idle passes): $(( (tls_cpu_after - tls_cpu_before) * 10 )) ms"
