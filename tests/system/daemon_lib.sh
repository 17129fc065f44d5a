# Shared by the daemon system tests (daemon_*_test.sh): the real `fdl-mirror run` in the
# background with a fake $NOTIFY_SOCKET, its /metrics scraped and waited on, and the servers
# (nginx, s3rver) its origins and mirrors need, all on loopback. Source it after lib.sh.
#
# The waits (wait_for_*, start_daemon, stop_daemon) call fail and return 1 when their
# condition is not met in time; under lib.sh's `set -e` a bare call then ends the script,
# since what follows depends on it. The expect_* checks only count. On exit every process
# started here is stopped, and when anything failed the daemons' logs are printed.
: "${SOURCE_DIR:?set by ctest}"
daemon_lib_dir=$SOURCE_DIR/tests/system
export LC_ALL=C   # EPOCHREALTIME and awk with a '.' decimal point
# The system's python3 when there is one: a version manager's shim (pyenv) costs most of a
# second a start.
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3

bg_pids=()       # every background process started here, stopped on exit
daemon_runs=0    # daemons started so far; daemon N logs to $work/daemon-N.log
daemon_pid=      # the last daemon started
daemon_port=     # its port, from its `listening on 127.0.0.1:PORT` line
daemon_log=      # its stderr
daemon_notes=    # what its NOTIFY_SOCKET received (see notify_receiver.py)
daemon_status=   # its exit status, once stop_daemon or wait_for_exit saw it end
daemon_stop_seconds=  # how long it took to exit after stop_daemon's signal
daemon_args=()   # more arguments of `fdl-mirror run` for the next start_daemon

# --- processes ---------------------------------------------------------------------------

# running PID: the process exists and has not exited (a zombie has).
running() {
  local state
  state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# seconds_since START: the time since START (an $EPOCHREALTIME), in seconds.
seconds_since() { awk -v start="$1" -v now="$EPOCHREALTIME" 'BEGIN { printf "%.3f", now - start }'; }
# less_than A B: A < B, as numbers.
less_than() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# stop_process PID: SIGTERM, then SIGKILL after 5 s; reaps it.
stop_process() {
  local pid=$1 i
  running "$pid" || { wait "$pid" 2>/dev/null || true; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do running "$pid" || break; sleep 0.05; done
  running "$pid" && kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
}

dump_logs() {
  local file
  for file in "$work"/daemon-*.log "$work"/nginx/error.log "$work"/s3rver.log "$work"/prometheus.log; do
    [ -s "$file" ] || continue
    echo "--- ${file#"$work"/} (last 200 lines)" >&2
    tail -n 200 "$file" | sed 's/^/  /' >&2
  done
}

daemon_cleanup() {
  local status=$? i
  # Last started first: a daemon before the receiver and the servers it uses.
  for ((i = ${#bg_pids[@]} - 1; i >= 0; i--)); do stop_process "${bg_pids[i]}"; done
  [ -x "$work/rgw/stop-rgw.sh" ] && "$work/rgw/stop-rgw.sh" >/dev/null 2>&1
  if [ "$status" -ne 0 ] || [ "$failures" -ne 0 ]; then dump_logs; fi
  if [ -n "${FDL_MIRROR_KEEP_WORK:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap daemon_cleanup EXIT
trap 'exit 143' TERM   # a stopped test cleans up too
trap 'exit 130' INT

# --- the fake notification socket -------------------------------------------------------

# start_receiver SOCKET NOTES: a notify_receiver.py on SOCKET (a path, or @name), writing to
# NOTES; returns once it is bound.
start_receiver() {
  local socket=$1 notes=$2 i
  "$python" "$daemon_lib_dir/notify_receiver.py" "$socket" "$notes" "$$" >"$notes.out" 2>&1 &
  bg_pids+=($!)
  for ((i = 0; i < 200; i++)); do [ -e "$notes" ] && return 0; sleep 0.05; done
  fail "the notify receiver did not bind $socket: $(cat "$notes.out")"
  return 1
}

# notes [FILE]: the messages received so far, one a line, newlines within shown as ';'.
notes() { cut -d' ' -f3- "${1:-$daemon_notes}"; }

# wait_for_note TEXT TIMEOUT DESCRIPTION [AFTER]: a message equal to TEXT (or, for
# RELOADING=1, starting with it) arrives, after the first AFTER lines of the notes.
wait_for_note() {
  local text=$1 limit=$2 what=$3 after=${4:-0} start=$EPOCHREALTIME
  while ! tail -n +"$((after + 1))" "$daemon_notes" | cut -d' ' -f3- | grep -q -e "^$text\$" -e "^$text;"; do
    if ! less_than "$(seconds_since "$start")" "$limit"; then
      fail "$what: no $text on NOTIFY_SOCKET within ${limit}s; received: $(notes | tr '\n' '|')"
      return 1
    fi
    sleep 0.05
  done
  pass
}

# wait_until TIMEOUT DESCRIPTION CONDITION: the shell CONDITION (evaluated anew each time,
# every 0.1 s) holds within TIMEOUT seconds.
wait_until() {
  local limit=$1 what=$2 condition=$3 start=$EPOCHREALTIME
  until eval "$condition" >/dev/null 2>&1; do
    if ! less_than "$(seconds_since "$start")" "$limit"; then
      fail "$what: not within ${limit}s ($condition)"
      return 1
    fi
    sleep 0.1
  done
  pass
}

# --- the daemon --------------------------------------------------------------------------

# start_daemon CONFIG [NAME=VALUE...]: starts `fdl-mirror run --config CONFIG` in the
# background with the environment given and NOTIFY_SOCKET a fresh receiver's
# ($notify_socket when set, e.g. an @abstract name; else a path in $work). Returns once the
# daemon logged `listening on 127.0.0.1:PORT`, with daemon_pid, daemon_port, daemon_log and
# daemon_notes set.
start_daemon() {
  local config=$1
  shift
  daemon_runs=$((daemon_runs + 1))
  daemon_log=$work/daemon-$daemon_runs.log
  daemon_notes=$work/notify-$daemon_runs.txt
  daemon_status=
  local socket=${notify_socket:-$work/notify-$daemon_runs.sock}
  start_receiver "$socket" "$daemon_notes"
  env -u WATCHDOG_USEC -u WATCHDOG_PID -u LISTEN_FDS -u LISTEN_PID NOTIFY_SOCKET="$socket" "$@" \
    "$FDL_MIRROR" run --config "$config" "${daemon_args[@]}" >"$work/daemon-$daemon_runs.out" 2>"$daemon_log" &
  daemon_pid=$!
  bg_pids+=("$daemon_pid")
  wait_for_listen
}

# wait_for_listen: the current daemon logs its listen line within 20 s; sets daemon_port.
wait_for_listen() {
  local start=$EPOCHREALTIME line
  while :; do
    line=$(grep -m1 -o 'listening on 127\.0\.0\.1:[0-9][0-9]*' "$daemon_log" 2>/dev/null || true) # the shell may not have opened it yet
    if [ -n "$line" ]; then
      daemon_port=${line##*:}
      return 0
    fi
    if ! running "$daemon_pid"; then
      wait_for_exit 1 || true
      fail "daemon $daemon_runs exited ($daemon_status) before listening:"$'\n'"$(sed 's/^/  /' "$daemon_log")"
      return 1
    fi
    if ! less_than "$(seconds_since "$start")" 20; then
      fail "daemon $daemon_runs logged no 'listening on 127.0.0.1:PORT' within 20 s"
      return 1
    fi
    sleep 0.05
  done
}

# wait_for_exit LIMIT: the current daemon exits within LIMIT seconds (else it is killed and
# this fails); sets daemon_status.
wait_for_exit() {
  local limit=$1 start=$EPOCHREALTIME
  while running "$daemon_pid"; do
    if ! less_than "$(seconds_since "$start")" "$limit"; then
      fail "daemon $daemon_runs still running ${limit}s after it was asked to stop; killed"
      kill -KILL "$daemon_pid" 2>/dev/null || true
      daemon_status=0
      wait "$daemon_pid" 2>/dev/null || daemon_status=$?
      return 1
    fi
    sleep 0.02
  done
  daemon_status=0
  wait "$daemon_pid" 2>/dev/null || daemon_status=$?
}

# stop_daemon [SIGNAL [LIMIT]]: sends SIGNAL (TERM) and waits up to LIMIT (15) seconds for
# the exit; sets daemon_status and daemon_stop_seconds.
stop_daemon() {
  local signal=${1:-TERM} limit=${2:-15} sent=$EPOCHREALTIME
  kill -s "$signal" "$daemon_pid"
  wait_for_exit "$limit" || return 1
  daemon_stop_seconds=$(seconds_since "$sent")
}

# expect_clean_exit DESCRIPTION: the daemon stopped by stop_daemon exited 0.
expect_clean_exit() {
  if [ "$daemon_status" = 0 ]; then pass; else fail "$1: daemon exited $daemon_status, want 0"; fi
}

# log_length: lines the current daemon has logged so far (for "after this point" waits).
log_length() { wc -l <"$daemon_log"; }

# wait_for_log TIMEOUT DESCRIPTION AFTER TEXT...: a line after the first AFTER lines of the
# log contains every TEXT.
wait_for_log() {
  local limit=$1 what=$2 after=$3 start=$EPOCHREALTIME
  shift 3
  while [ "$(log_lines_with "$after" "$@")" -eq 0 ]; do
    if ! less_than "$(seconds_since "$start")" "$limit"; then
      fail "$what: no log line with '$*' within ${limit}s"
      tail -n 20 "$daemon_log" | sed 's/^/  log: /' >&2
      return 1
    fi
    running "$daemon_pid" || { fail "$what: the daemon exited"; return 1; }
    sleep 0.05
  done
  pass
}

# log_lines_with AFTER TEXT...: how many lines after the first AFTER contain every TEXT.
log_lines_with() {
  local after=$1
  shift
  tail -n +"$((after + 1))" "$daemon_log" | {
    local line n=0 text
    while IFS= read -r line; do
      for text in "$@"; do [[ $line == *"$text"* ]] || continue 2; done
      n=$((n + 1))
    done
    echo "$n"
  }
}

# --- events ------------------------------------------------------------------------------

# events_port: the events' listener's port, from the current daemon's `events: listening on
# 127.0.0.1:PORT` line ("" when it logged none).
events_port() { grep -m1 -o 'events: listening on 127\.0\.0\.1:[0-9][0-9]*' "$daemon_log" | sed 's/.*://'; }

# write_webhook_secret REPOSITORY SECRET: the events' secrets file $work/events.yaml, with
# that repository's webhook secret, readable by its owner alone (as the daemon requires).
write_webhook_secret() {
  printf 'webhooks:\n  %s: %s\n' "$1" "$2" >"$work/events.yaml"
  chmod 600 "$work/events.yaml"
}

# send_webhook REPOSITORY SECRET [TIMESTAMP [BODY [SIGNATURE]]]: POSTs a webhook to the events'
# listener, signed (HMAC-SHA256 of TIMESTAMP./hooks/REPOSITORY.BODY under SECRET, as
# docs/events.md says, with openssl) unless SIGNATURE is given ("-" for none); prints the
# HTTP status.
send_webhook() {
  local repo=$1 secret=$2 timestamp=${3:-$(date +%s)} body=${4:-'{"ref":"refs/heads/main"}'} signature=${5:-}
  [ -n "$signature" ] || signature=sha256=$(printf '%s./hooks/%s.%s' "$timestamp" "$repo" "$body" |
    openssl dgst -sha256 -hmac "$secret" | sed 's/.*= //')
  local headers=(-H "X-Fdl-Timestamp: $timestamp" -H 'Content-Type: application/json')
  [ "$signature" = - ] || headers+=(-H "X-Hub-Signature-256: $signature")
  curl -s -o "$work/webhook.out" -w '%{http_code}' --max-time 5 "${headers[@]}" --data-binary "$body" \
    "http://127.0.0.1:$(events_port)/hooks/$repo" || true
}

# --- /metrics ----------------------------------------------------------------------------

url() { echo "http://127.0.0.1:$daemon_port$1"; }
# http_status PATH: the status the daemon answers GET PATH with (000: no answer).
http_status() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$(url "$1")" || true; }

# scrape [FILE]: GET /metrics into FILE ($work/metrics).
scrape() { curl -fsS --max-time 5 -o "${1:-$work/metrics}" "$(url /metrics)"; }

# query COMMAND SELECTOR [OP NUMBER]: metrics_query.awk on the last scrape.
query() {
  awk -f "$daemon_lib_dir/metrics_query.awk" -v command="$1" -v selector="$2" -v op="${3:-}" -v want="${4:-}" \
    "$work/metrics"
}
# metric SELECTOR: the value of the one sample SELECTOR matches in the last scrape
# ('absent' when none).
metric() { query value "$1" || echo absent; }
# series SELECTOR: how many samples SELECTOR matches in the last scrape.
series() { query count "$1"; }

# expect_metric SELECTOR OP NUMBER DESCRIPTION: in the last scrape.
expect_metric() {
  if query check "$1" "$2" "$3"; then pass; else fail "$4: $1 is $(metric "$1"), want $2 $3"; fi
}
# expect_series SELECTOR OP N DESCRIPTION: the count of samples SELECTOR matches compares so.
expect_series() {
  local n
  n=$(series "$1")
  if awk -v n="$n" -v op="$2" -v want="$3" 'BEGIN { exit !((op == "==" && n == want) || (op == ">=" && n >= want) || (op == ">" && n > want)) }'; then
    pass
  else
    fail "$4: $n sample(s) match $1, want $2 $3:"$'\n'"$(query list "$1" | sed 's/^/  /')"
  fi
}

# wait_for_metric SELECTOR OP NUMBER TIMEOUT DESCRIPTION: scrapes until the sample compares so.
wait_for_metric() {
  local selector=$1 op=$2 want=$3 limit=$4 what=$5 start=$EPOCHREALTIME
  while :; do
    if scrape 2>/dev/null && query check "$selector" "$op" "$want"; then
      pass
      return 0
    fi
    if ! running "$daemon_pid"; then
      fail "$what: the daemon exited while waiting for $selector $op $want"
      return 1
    fi
    if ! less_than "$(seconds_since "$start")" "$limit"; then
      fail "$what: $selector $op $want not seen within ${limit}s (last: $(metric "$selector"))"
      tail -n 20 "$daemon_log" | sed 's/^/  log: /' >&2
      return 1
    fi
    sleep 0.2
  done
}

# wait_for_series SELECTOR N TIMEOUT DESCRIPTION: scrapes until exactly N samples match.
wait_for_series() {
  local selector=$1 want=$2 limit=$3 what=$4 start=$EPOCHREALTIME
  while :; do
    if scrape 2>/dev/null && [ "$(series "$selector")" -eq "$want" ]; then
      pass
      return 0
    fi
    if ! less_than "$(seconds_since "$start")" "$limit"; then
      fail "$what: $(series "$selector") sample(s) match $selector after ${limit}s, want $want:"$'\n'"$(query list "$selector" | sed 's/^/  /')"
      return 1
    fi
    sleep 0.2
  done
}

# find_unpacked NAME: the program NAME on PATH, else where scripts/setup unpacks it
# (build/deps/NAME/NAME of this build, else of the source tree's build/); "" when neither.
find_unpacked() {
  local candidate found
  found=$(command -v "$1" || true)
  for candidate in "$(dirname "$FDL_MIRROR")/deps/$1/$1" "$SOURCE_DIR/build/deps/$1/$1"; do
    [ -n "$found" ] || { [ -x "$candidate" ] && found=$candidate; }
  done
  echo "$found"
}
find_promtool() { find_unpacked promtool; }
find_prometheus() { find_unpacked prometheus; }

prometheus_port=  # the port of the Prometheus start_prometheus started
# start_prometheus CONFIG: a real Prometheus on a free loopback port with CONFIG, its data
# in $work; returns once it is ready (within 30 s), with prometheus_port set.
start_prometheus() {
  local binary start=$EPOCHREALTIME
  binary=$(find_prometheus)
  if [ -z "$binary" ]; then
    fail "prometheus not found: run scripts/setup"
    return 1
  fi
  prometheus_port=$(free_port)
  "$binary" --config.file="$1" --storage.tsdb.path="$work/prometheus-data" \
    --web.listen-address="127.0.0.1:$prometheus_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
  bg_pids+=($!)
  until curl -fs --max-time 2 -o /dev/null "http://127.0.0.1:$prometheus_port/-/ready"; do
    if ! less_than "$(seconds_since "$start")" 30; then
      fail "prometheus was not ready within 30 s: $(tail -5 "$work/prometheus.log")"
      return 1
    fi
    sleep 0.2
  done
}

# prometheus_api PATH [CURL ARGS...]: the JSON of Prometheus's API at PATH (/api/v1/…).
prometheus_api() {
  local path=$1
  shift
  curl -fsS --max-time 5 "$@" "http://127.0.0.1:$prometheus_port$path"
}

# expect_rules_test FILE DESCRIPTION: `promtool test rules FILE` passes (a unit test of the
# shipped rules written from what the real daemon emitted).
# rules_test_preamble FILE: starts a promtool rule test of the shipped rules in FILE (its
# folder made): one test, a minute between samples; the caller appends its input_series.
rules_test_preamble() {
  mkdir -p "$(dirname "$1")"
  cat >"$1" <<YAML
rule_files:
  - $SOURCE_DIR/systemd/fdl-mirror.rules.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
YAML
}

expect_rules_test() {
  local promtool
  promtool=$(find_promtool)
  if [ -z "$promtool" ]; then
    fail "promtool not found: run scripts/setup"
    return 0
  fi
  expect_status 0 "$2" -- "$promtool" test rules "$1"
}

# --- origins -----------------------------------------------------------------------------

# stage ORIGIN: a copy of ORIGIN in $work/stage, where a new version can be made and
# damaged before the daemon may see it (install_staged).
stage() { rm -rf "$work/stage"; cp -a "$1" "$work/stage"; }

# staged_new_files ORIGIN: the files the stage has and ORIGIN lacks.
staged_new_files() { comm -13 <(cd "$1" && find . -type f | sort) <(cd "$work/stage" && find . -type f | sort); }

# install_staged ORIGIN: copies what the stage added into ORIGIN as a writer would: data and
# version files first, version.json after them, then the changed refs and refs.json, each
# by a rename and all in a row, so that the daemon sees the new version whole or not at all.
# (The copies to rename wait outside ORIGIN: in refs/, any file is a ref.)
install_staged() {
  local origin=$1 file changed=() n=0
  while read -r file; do
    case $file in ./refs/* | */version.json) continue ;; esac
    mkdir -p "$(dirname "$origin/$file")"
    cp "$work/stage/$file" "$origin/$file"
  done < <(staged_new_files "$origin")
  while read -r file; do
    case $file in */version.json) cp "$work/stage/$file" "$origin/$file" ;; esac
  done < <(staged_new_files "$origin")
  # nginx's validators (an ETag of the modification time and size, Last-Modified) cannot
  # tell apart two refs.json of one size written within one second: a daemon that read the
  # first would be answered 304 for the second. A writer of a real origin is seconds apart
  # (the stop note of 2026-12-05 has what the store should do about it); here, the next
  # second is awaited when the last refs.json is from this one.
  local last
  last=$(stat -c %Y "$origin/refs.json" 2>/dev/null || echo 0)
  while [ "$(date +%s)" -le "$last" ]; do sleep 0.05; done
  rm -rf "$work/renames"
  mkdir -p "$work/renames"
  while read -r file; do
    cmp -s "$work/stage/$file" "$origin/$file" && continue
    mkdir -p "$(dirname "$origin/$file")"
    n=$((n + 1))
    cp "$work/stage/$file" "$work/renames/$n"
    changed+=("$file")
  done < <(cd "$work/stage" && find refs -type f && echo refs.json && echo HEAD)
  for ((n = 1; n <= ${#changed[@]}; n++)); do mv "$work/renames/$n" "$origin/${changed[n - 1]}"; done
}

# replace_file FILE: stdin becomes FILE's content by a rename from outside FILE's folder (a
# reader sees the old content or the new, whole, and never a third file).
replace_file() { cat >"$work/replacement" && mv "$work/replacement" "$1"; }

# set_ref ORIGIN REF ID: points REF (refs/tags/v1) at ID, in refs/ and refs.json, by rename.
set_ref() {
  local origin=$1 ref=$2 id=$3
  printf '%s' "$id" | replace_file "$origin/$ref"
  "$python" -c 'import json, sys
refs = json.load(open(sys.argv[1]))
refs["refs"][sys.argv[2]] = sys.argv[3]
print(json.dumps(refs))' "$origin/refs.json" "$ref" "$id" | replace_file "$origin/refs.json"
}

# ref_of REPO REF: the version REF names in REPO (a folder), or nothing.
ref_of() { if [ -f "$1/$2" ]; then tr -d '\n' <"$1/$2"; fi; }

# --- servers -----------------------------------------------------------------------------

# free_port: a port of 127.0.0.1 that was free a moment ago.
free_port() {
  "$python" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# accepting PORT: something accepts TCP connections on 127.0.0.1:PORT.
accepting() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start_nginx ROOT: nginx serving the folder ROOT on loopback (as tests/support/nginx.cpp
# does); sets nginx_port and nginx_pid. Everything nginx writes goes to $work/nginx.
start_nginx() {
  local root=$1 prefix=$work/nginx attempt user=''
  mkdir -p "$prefix/tmp"
  # As root nginx would hand its temp folders to "nobody", which need not exist.
  [ "$(id -u)" -eq 0 ] && user="user root;"
  for ((attempt = 0; attempt < 5; attempt++)); do
    nginx_port=$(free_port)
    cat >"$prefix/nginx.conf" <<CONF
$user
daemon off;
master_process off;
pid $prefix/nginx.pid;
error_log $prefix/error.log info;
events { worker_connections 64; }
http {
    access_log $prefix/access.log;
    client_body_temp_path $prefix/tmp/body;
    proxy_temp_path $prefix/tmp/proxy;
    fastcgi_temp_path $prefix/tmp/fastcgi;
    uwsgi_temp_path $prefix/tmp/uwsgi;
    scgi_temp_path $prefix/tmp/scgi;
    default_type application/octet-stream;
    types { application/json json; }
    sendfile on;
    server {
        listen 127.0.0.1:$nginx_port;
        server_name localhost;
        root $root;
        autoindex off;
        location / { }
    }
}
CONF
    spawn_nginx && return 0   # else the port was taken meanwhile: another one
  done
  fail "nginx did not start in 5 attempts: $(tail -n 5 "$prefix/error.log" 2>/dev/null)"
  return 1
}

# spawn_nginx: starts nginx on $work/nginx/nginx.conf; returns once it accepts connections.
spawn_nginx() {
  local prefix=$work/nginx binary i
  binary=$(command -v nginx || echo /usr/sbin/nginx)
  [ -x "$binary" ] || { fail "nginx is not installed: run scripts/setup"; return 1; }
  rm -f "$prefix/nginx.pid"
  "$binary" -p "$prefix/" -c "$prefix/nginx.conf" -e "$prefix/error.log" >>"$prefix/nginx.out" 2>&1 &
  nginx_pid=$!
  bg_pids+=("$nginx_pid")
  for ((i = 0; i < 200; i++)); do
    running "$nginx_pid" || break
    if [ -e "$prefix/nginx.pid" ] && accepting "$nginx_port"; then return 0; fi
    sleep 0.05
  done
  stop_process "$nginx_pid"
  return 1
}

# stop_nginx, restart_nginx: the origin server goes away, and comes back on the same port.
stop_nginx() { stop_process "$nginx_pid"; }
restart_nginx() { spawn_nginx || { fail "nginx did not restart on port $nginx_port"; return 1; }; }

# start_rgw BUCKET: Ceph RGW (scripts/deps/rgw/start-rgw.sh; scripts/setup installs its
# packages), a throwaway cluster under $work/rgw stopped at exit, with BUCKET; sets
# s3_port, s3_access_key and s3_secret_key, and writes them to $work/s3-credentials.
start_rgw() {
  local bucket=$1 printed
  command -v radosgw >/dev/null || { fail "radosgw is not installed: run scripts/setup"; return 1; }
  printed=$(BASE="$work/rgw" bash "$SOURCE_DIR/scripts/deps/rgw/start-rgw.sh" 2>"$work/rgw-start.log") ||
    { fail "Ceph RGW did not start: $(tail -n 5 "$work/rgw-start.log")"; return 1; }
  s3_port=$(sed -n 's/^S3_ENDPOINT=http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' <<<"$printed")
  s3_access_key=$(sed -n 's/^S3_ACCESS_KEY=//p' <<<"$printed")
  s3_secret_key=$(sed -n 's/^S3_SECRET_KEY=//p' <<<"$printed")
  printf 'access_key_id = %s\nsecret_access_key = %s\n' "$s3_access_key" "$s3_secret_key" >"$work/s3-credentials"
  curl -sS -f -X PUT --aws-sigv4 aws:amz:us-east-1:s3 --user "$s3_access_key:$s3_secret_key" \
    -H 'x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' \
    "http://127.0.0.1:$s3_port/$bucket" >/dev/null || { fail "bucket $bucket not created on RGW"; return 1; }
}

# with_s3 COMMAND...: COMMAND with the AWS variables of the S3 server start_s3 or start_rgw
# started (its keys, its endpoint), as `fdl-mirror sync` into or out of it takes them.
with_s3() {
  env AWS_ACCESS_KEY_ID="$s3_access_key" AWS_SECRET_ACCESS_KEY="$s3_secret_key" AWS_REGION=us-east-1 \
    AWS_ENDPOINT_URL="http://127.0.0.1:$s3_port" "$@"
}

# start_s3 BUCKET: the S3 server $FDL_TEST_S3_SERVER names (s3rver, the default, or rgw)
# with BUCKET; sets s3_port, s3_access_key and s3_secret_key, and writes
# $work/s3-credentials.
start_s3() {
  case ${FDL_TEST_S3_SERVER:-s3rver} in
    rgw) start_rgw "$1" ;;
    *) start_s3rver "$1" && s3_port=$s3rver_port s3_access_key=S3RVER s3_secret_key=S3RVER ;;
  esac
}

# start_s3rver BUCKET: the S3 test server (scripts/setup installs it with npm into
# build/deps/s3rver) with BUCKET, on loopback; sets s3rver_port and writes its one account's
# keys (S3RVER/S3RVER) to $work/s3-credentials, a credentials_file.
start_s3rver() {
  local bucket=$1 dir='' candidate i
  for candidate in "$(dirname "$FDL_MIRROR")/deps/s3rver" "$SOURCE_DIR/build/deps/s3rver"; do
    [ -n "$dir" ] || { [ -f "$candidate/node_modules/s3rver/bin/s3rver.js" ] && dir=$candidate; }
  done
  [ -n "$dir" ] || { fail "s3rver is not installed: run scripts/setup"; return 1; }
  command -v node >/dev/null || { fail "node is not installed, which s3rver needs: run scripts/setup"; return 1; }
  mkdir -p "$work/s3rver-data"
  NODE_OPTIONS=--openssl-legacy-provider node "$dir/node_modules/s3rver/bin/s3rver.js" --directory "$work/s3rver-data" \
    --address 127.0.0.1 --port 0 --silent --configure-bucket "$bucket" </dev/null >"$work/s3rver.log" 2>&1 &
  local pid=$!
  bg_pids+=("$pid")
  for ((i = 0; i < 600; i++)); do
    s3rver_port=$(sed -n 's/.*S3rver listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$work/s3rver.log" | head -n1)
    if [ -n "$s3rver_port" ] && accepting "$s3rver_port"; then
      printf 'access_key_id = S3RVER\nsecret_access_key = S3RVER\n' >"$work/s3-credentials"
      return 0
    fi
    running "$pid" || break
    sleep 0.05
  done
  fail "s3rver did not start within 30 s: $(tail -n 5 "$work/s3rver.log")"
  return 1
}

# sample_config [REPOSITORY_LINE...]: a sample repository in $work/origin, and
# $work/mirror.yaml mirroring it into $work/mirror as repository population (interval 1h,
# signatures off, state in $work/state), with each REPOSITORY_LINE added to its list.
sample_config() {
  "$FDL_PUBLISHER" sample "$work/origin" >/dev/null
  {
    cat <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
defaults: { interval: 1h, signatures: off }
repositories:
  - { name: population, origin: $work/origin, mirror: $work/mirror }
YAML
    local line
    for line in "$@"; do echo "  $line"; done
  } >"$work/mirror.yaml"
}
