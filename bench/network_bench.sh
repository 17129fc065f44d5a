#!/usr/bin/env bash
# Network benchmark (issue 5): fdl-mirror against `rclone copy`, side by side in this one run.
# Starts its own nginx (plain HTTP on 127.0.0.1, autoindex on so that rclone's http backend
# can list, an access log to count requests) and s3rver (data on tmpfs), and mirrors:
#   (a) the folder benchmark's synthetic repository without its large files (30 versions,
#       4,000 data files of 16 KiB), nginx -> a tmpfs folder;
#   (b) a repository dominated by 4 data files of 256 MiB, nginx -> a tmpfs folder;
#   (c) the tree of (a) (or fewer data files: BENCH_S3_SMALL_FILES), s3rver -> s3rver;
#   (d) the poll cost: requests nginx sees when fdl-mirror re-polls the unchanged origin of
#       (a), with --quick and without;
#   (e) the tree of (c), Ceph RGW -> Ceph RGW (scripts/deps/rgw/start-rgw.sh; rclone with
#       --s3-provider Ceph);
#   (f) the repository of (a), nginx -> Ceph RGW.
# In (a) and (b) two more peers run beside rclone: rclone followed by `sha256sum` of every
# file it copied (what a user runs to get verified copies), and in (b) the machine's floor
# for the large files: each fetched by its own `curl` piped into `openssl dgst -sha256`,
# all at once.
# The tools run interleaved round by round, in rotating order, into fresh destinations,
# after one untimed warm-up of each. Prints per-round times, medians, fdl-mirror's ratio to
# rclone (issue 5's target <= 0.80 on each; issue 16's: <= 1.5 x rclone and <= 0.5 x rclone
# + sha256sum in (a) and (b), and the large files of (b) at >= 90 % of the floor), peak RSS
# (target < 64 MiB in (b)) and request counts (target <= 3 for the quick poll).
#
#   bench/network_bench.sh [ROUNDS]        (default 3; needs a build, rclone, nginx, s3rver: scripts/setup)
#   BENCH_DIR=/path BENCH_CONCURRENCY=8 BENCH_S3_SMALL_FILES=1000 BENCH_SCENARIOS="a b c e f" ... to change it.
#   BENCH_MIMALLOC=1: in (a) and (b), fdl-mirror also runs with Debian's mimalloc
#   (libmimalloc2.0) preloaded, as one more tool of the same rounds (the allocator decision).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
build=${FDL_MIRROR_BUILD_DIR:-build}
fdl_mirror=$PWD/$build/fdl-mirror
publisher=$PWD/$build/fdl-test-publisher
s3rver_cli=$PWD/$build/deps/s3rver/node_modules/s3rver/bin/s3rver.js
bench_dir=${BENCH_DIR:-/dev/shm/fdl-mirror-network-bench}
scenarios=${BENCH_SCENARIOS:-a b c}
concurrency=${BENCH_CONCURRENCY:-8}
versions=${BENCH_VERSIONS:-30}
small_files=${BENCH_SMALL_FILES:-4000}
small_bytes=${BENCH_SMALL_BYTES:-16384}
# (b): a few versions, a few small files, and the large files that dominate the bytes.
large_versions=${BENCH_LARGE_VERSIONS:-3}
large_small_files=${BENCH_LARGE_SMALL_FILES:-10}
large_files=${BENCH_LARGE_FILES:-4}
large_bytes=${BENCH_LARGE_BYTES:-268435456}
# (c): s3rver (Node, one file and one metadata file per object) is slow; fewer files keep
# a round short. The same 30 versions.
s3_small_files=${BENCH_S3_SMALL_FILES:-$small_files}

for tool in "$fdl_mirror" "$publisher"; do
  [ -x "$tool" ] || { echo "missing $tool: run scripts/setup" >&2; exit 2; }
done
for tool in rclone nginx node curl openssl sha256sum python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool: run scripts/setup" >&2; exit 2; }
done
[ -f "$s3rver_cli" ] || { echo "missing $s3rver_cli: run scripts/setup" >&2; exit 2; }

nginx_pid=
s3rver_pid=
cleanup() {
  # Only the servers this script started, by their pids.
  [ -z "$nginx_pid" ] || { kill -TERM "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; }
  [ -z "$s3rver_pid" ] || { kill -TERM "$s3rver_pid" 2>/dev/null || true; wait "$s3rver_pid" 2>/dev/null || true; }
  [ ! -x "$bench_dir/rgw/stop-rgw.sh" ] || "$bench_dir/rgw/stop-rgw.sh" >/dev/null 2>&1 || true
  rm -rf "$bench_dir"
}
rm -rf "$bench_dir"
mkdir -p "$bench_dir"
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# --- the origins ---------------------------------------------------------------------------
www=$bench_dir/www # nginx's root: www/a and www/b are the repositories of (a) and (b)
mkdir -p "$www"
has() { [[ " $scenarios " == *" $1 "* ]]; }
if has a || has c || has d || has e || has f; then
  echo "(a) origin: $versions versions, $small_files x $small_bytes B, no large files"
  "$publisher" bench "$www/a" "$versions" "$small_files" "$small_bytes" 0 0 >/dev/null
  du -sh "$www/a" | sed 's/^/    size: /'
fi
if has b; then
  echo "(b) origin: $large_versions versions, $large_small_files x $small_bytes B + $large_files x $large_bytes B"
  "$publisher" bench "$www/b" "$large_versions" "$large_small_files" "$small_bytes" "$large_files" "$large_bytes" >/dev/null
  du -sh "$www/b" | sed 's/^/    size: /'
fi
s3_tree=$www/a
if { has c || has e; } && [ "$s3_small_files" != "$small_files" ]; then
  s3_tree=$bench_dir/s3-tree
  "$publisher" bench "$s3_tree" "$versions" "$s3_small_files" "$small_bytes" 0 0 >/dev/null
fi

# --- nginx ---------------------------------------------------------------------------------
ngx=$bench_dir/nginx
mkdir -p "$ngx/tmp"
start_nginx() {
  local attempt
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    cat >"$ngx/nginx.conf" <<EOF
$([ "$(id -u)" -eq 0 ] && echo "user root;")
daemon off;
worker_processes 2;
pid $ngx/nginx.pid;
error_log $ngx/error.log warn;
events { worker_connections 1024; }
http {
    log_format conn '\$connection \$connection_requests \$status \$body_bytes_sent "\$request"';
    access_log $ngx/access.log conn;
    client_body_temp_path $ngx/tmp/body;
    proxy_temp_path $ngx/tmp/proxy;
    fastcgi_temp_path $ngx/tmp/fastcgi;
    uwsgi_temp_path $ngx/tmp/uwsgi;
    scgi_temp_path $ngx/tmp/scgi;
    default_type application/octet-stream;
    types { application/json json; text/plain txt; text/html html; }
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 60s;
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:$port;
        server_name localhost;
        root $www;
        autoindex on;
        etag on;
        location / { }
    }
}
EOF
    rm -f "$ngx/nginx.pid"
    nginx -p "$ngx/" -c "$ngx/nginx.conf" -e "$ngx/error.log" >>"$ngx/nginx.out" 2>&1 &
    nginx_pid=$!
    local i
    for i in $(seq 200); do
      if ! kill -0 "$nginx_pid" 2>/dev/null; then
        wait "$nginx_pid" 2>/dev/null || true
        nginx_pid=
        grep -q "Address already in use" "$ngx/error.log" 2>/dev/null && continue 2
        echo "nginx exited at startup:" >&2
        cat "$ngx/error.log" "$ngx/nginx.out" >&2
        exit 3
      fi
      [ -f "$ngx/nginx.pid" ] && curl -sf -o /dev/null "http://127.0.0.1:$port/" && return 0
      sleep 0.05
    done
    echo "nginx did not answer within 10 s" >&2
    exit 3
  done
  echo "nginx found no free port in 5 attempts" >&2
  exit 3
}
start_nginx
http_base=http://127.0.0.1:$port
echo "nginx (2 workers) on $http_base/, root $www"
requests() { wc -l <"$ngx/access.log"; }
large_urls=()
if has b; then
  while IFS= read -r file; do
    large_urls+=("$http_base/b/${file#"$www/b/"}")
  done < <(find "$www/b/data" -type f -size "${large_bytes}c" | sort)
fi

# --- s3rver --------------------------------------------------------------------------------
# rclone 1.60's AWS SDK refuses AWS_CA_BUNDLE outright (an unsupported transport); neither
# tool needs it for http://, so both run without it, and without ~/.aws (fdl-mirror wants a
# regular file for AWS_CONFIG_FILE, so an empty one rather than /dev/null).
: >"$bench_dir/aws-empty"
s3_env=(env -u AWS_CA_BUNDLE -u AWS_PROFILE -u AWS_SESSION_TOKEN
  AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
  AWS_CONFIG_FILE=$bench_dir/aws-empty AWS_SHARED_CREDENTIALS_FILE=$bench_dir/aws-empty)
rclone_env=(env -u AWS_CA_BUNDLE RCLONE_CONFIG=/dev/null)
if has c; then
  mkdir -p "$bench_dir/s3rver/data"
  NODE_OPTIONS=--openssl-legacy-provider node "$s3rver_cli" --directory "$bench_dir/s3rver/data" \
    --address 127.0.0.1 --port 0 --silent --configure-bucket origin --configure-bucket mirror \
    </dev/null >"$bench_dir/s3rver/log" 2>&1 &
  s3rver_pid=$!
  s3_port=
  for i in $(seq 600); do
    kill -0 "$s3rver_pid" 2>/dev/null || { echo "s3rver exited at startup:" >&2; cat "$bench_dir/s3rver/log" >&2; exit 3; }
    s3_port=$(sed -n 's/^S3rver listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$bench_dir/s3rver/log")
    [ -n "$s3_port" ] && break
    sleep 0.05
  done
  [ -n "$s3_port" ] || { echo "s3rver did not start within 30 s" >&2; exit 3; }
  s3_endpoint=http://127.0.0.1:$s3_port
  s3_env+=(AWS_ENDPOINT_URL=$s3_endpoint)
  rclone_s3_env=("${rclone_env[@]}" RCLONE_S3_PROVIDER=Other RCLONE_S3_ENDPOINT=$s3_endpoint
    RCLONE_S3_ACCESS_KEY_ID=S3RVER RCLONE_S3_SECRET_ACCESS_KEY=S3RVER RCLONE_S3_REGION=us-east-1
    RCLONE_S3_FORCE_PATH_STYLE=true)
  echo "s3rver on $s3_endpoint, data in $bench_dir/s3rver/data; loading bucket origin with the tree of (c) ($versions versions, $s3_small_files x $small_bytes B; untimed)"
  # --fast-list: s3rver leaves out some CommonPrefixes of delimited listings, which would
  # hide folders from rclone's walk; one recursive listing does not depend on them.
  "${rclone_s3_env[@]}" rclone copy "$s3_tree" :s3:origin/ --transfers 8 --fast-list --retries 1 -q
fi

# --- Ceph RGW -----------------------------------------------------------------------------
if has e || has f; then
  command -v radosgw >/dev/null || { echo "missing radosgw: run scripts/setup" >&2; exit 2; }
  rgw_printed=$(BASE="$bench_dir/rgw" bash scripts/deps/rgw/start-rgw.sh 2>"$bench_dir/rgw-start.log") ||
    { echo "Ceph RGW did not start:" >&2; tail -5 "$bench_dir/rgw-start.log" >&2; exit 3; }
  rgw_endpoint=$(sed -n 's/^S3_ENDPOINT=//p' <<<"$rgw_printed")
  rgw_key=$(sed -n 's/^S3_ACCESS_KEY=//p' <<<"$rgw_printed")
  rgw_secret=$(sed -n 's/^S3_SECRET_KEY=//p' <<<"$rgw_printed")
  rgw_env=(env -u AWS_CA_BUNDLE -u AWS_PROFILE -u AWS_SESSION_TOKEN
    AWS_ACCESS_KEY_ID=$rgw_key AWS_SECRET_ACCESS_KEY=$rgw_secret AWS_REGION=us-east-1
    AWS_CONFIG_FILE=$bench_dir/aws-empty AWS_SHARED_CREDENTIALS_FILE=$bench_dir/aws-empty
    AWS_ENDPOINT_URL=$rgw_endpoint)
  rclone_rgw_env=("${rclone_env[@]}" RCLONE_S3_PROVIDER=Ceph RCLONE_S3_ENDPOINT=$rgw_endpoint
    RCLONE_S3_ACCESS_KEY_ID=$rgw_key RCLONE_S3_SECRET_ACCESS_KEY=$rgw_secret RCLONE_S3_REGION=us-east-1
    RCLONE_S3_FORCE_PATH_STYLE=true)
  echo "Ceph RGW on $rgw_endpoint (objects in memory)"
  if has e; then
    echo "loading its bucket origin with the tree of (e) ($versions versions, $s3_small_files x $small_bytes B; untimed)"
    "${rclone_rgw_env[@]}" rclone mkdir :s3:origin
    "${rclone_rgw_env[@]}" rclone copy "$s3_tree" :s3:origin/ --transfers 8 --retries 1 -q
  fi
fi

# --- the runs ------------------------------------------------------------------------------
# run_timed NAME DEST COMMAND...: a fresh DEST (a folder), then one timed run; appends
# "seconds peak_kib cpu_seconds requests" to $bench_dir/NAME.times (cpu: user + system of
# the tool, not of the servers; requests: lines nginx logged meanwhile).
run_timed() {
  local name=$1 dest=$2 before after
  shift 2
  [ -z "$dest" ] || rm -rf "$dest"
  sync
  before=$(requests)
  if ! /usr/bin/time -f "%e %M %U %S" -o "$bench_dir/$name.last" "$@" >"$bench_dir/$name.out" 2>&1; then
    echo "$name failed: $*" >&2
    tail -20 "$bench_dir/$name.out" >&2
    exit 1
  fi
  after=$(requests)
  tail -1 "$bench_dir/$name.last" | awk -v r=$((after - before)) '{printf "%s %s %.2f %d\n", $1, $2, $3 + $4, r}' \
    >"$bench_dir/$name.line"
  mv "$bench_dir/$name.line" "$bench_dir/$name.last"
  cat "$bench_dir/$name.last" >>"$bench_dir/$name.times"
}
s3_run=0
run_tool() { # run_tool SCENARIO TOOL [warmup]
  local scenario=$1 tool=$2 name=$1-$2
  [ "${3:-}" != warmup ] || name=warmup
  case $scenario-$tool in
    a-fdl-mirror | b-fdl-mirror)
      run_timed "$name" "$bench_dir/dest-$scenario-fdl" \
        "$fdl_mirror" sync "$http_base/$scenario/" "$bench_dir/dest-$scenario-fdl" \
        --allow-plain-http --signatures off --concurrency "$concurrency" ;;
    a-fdl-mimalloc | b-fdl-mimalloc)
      run_timed "$name" "$bench_dir/dest-$scenario-fdl" env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2 \
        "$fdl_mirror" sync "$http_base/$scenario/" "$bench_dir/dest-$scenario-fdl" \
        --allow-plain-http --signatures off --concurrency "$concurrency" ;;
    a-rclone | b-rclone)
      run_timed "$name" "$bench_dir/dest-$scenario-rclone" \
        "${rclone_env[@]}" rclone copy --http-url "$http_base/$scenario/" :http: "$bench_dir/dest-$scenario-rclone" \
        --transfers "$concurrency" --checkers "$concurrency" ;;
    a-rclone-sha | b-rclone-sha)
      # rclone, then the digests it does not compute: every copied file through sha256sum,
      # as many at once as there are cores.
      run_timed "$name" "$bench_dir/dest-$scenario-rsha" "${rclone_env[@]}" bash -c \
        'rclone copy --http-url "$1" :http: "$2" --transfers "$3" --checkers "$3" &&
         find "$2" -type f -print0 | xargs -0 -n 64 -P "$(nproc)" sha256sum >/dev/null' \
        rclone-sha "$http_base/$scenario/" "$bench_dir/dest-$scenario-rsha" "$concurrency" ;;
    b-floor)
      # The large files only, each by its own curl into openssl, all at once; nothing written.
      run_timed "$name" "" bash -c \
        'pids=(); for url in "$@"; do (set -o pipefail; curl -sf "$url" | openssl dgst -sha256 >/dev/null) & pids+=($!); done
         for pid in "${pids[@]}"; do wait "$pid" || exit 1; done' \
        floor "${large_urls[@]}" ;;
    c-fdl-mirror)
      # A fresh bucket for each run, so that no run lists what an earlier one wrote.
      s3_run=$((s3_run + 1))
      "${rclone_s3_env[@]}" rclone mkdir ":s3:run$s3_run-fdl"
      s3_dest[fdl]=run$s3_run-fdl
      run_timed "$name" "" "${s3_env[@]}" "$fdl_mirror" sync s3://origin/ "s3://run$s3_run-fdl/mirror/" \
        --allow-plain-http --signatures off --concurrency "$concurrency" ;;
    e-fdl-mirror | f-fdl-mirror)
      s3_run=$((s3_run + 1))
      "${rclone_rgw_env[@]}" rclone mkdir ":s3:run$s3_run-fdl"
      s3_dest[$scenario-fdl]=run$s3_run-fdl
      local from=s3://origin/
      [ "$scenario" = e ] || from=$http_base/a/
      run_timed "$name" "" "${rgw_env[@]}" "$fdl_mirror" sync "$from" "s3://run$s3_run-fdl/mirror/" \
        --allow-plain-http --signatures off --concurrency "$concurrency" ;;
    e-rclone | f-rclone)
      s3_run=$((s3_run + 1))
      "${rclone_rgw_env[@]}" rclone mkdir ":s3:run$s3_run-rclone"
      s3_dest[$scenario-rclone]=run$s3_run-rclone
      if [ "$scenario" = e ]; then
        run_timed "$name" "" "${rclone_rgw_env[@]}" rclone copy :s3:origin/ ":s3:run$s3_run-rclone/mirror/" \
          --transfers "$concurrency" --checkers "$concurrency" --fast-list --disable Copy
      else
        run_timed "$name" "" "${rclone_rgw_env[@]}" rclone copy --http-url "$http_base/a/" :http: \
          ":s3:run$s3_run-rclone/mirror/" --transfers "$concurrency" --checkers "$concurrency"
      fi ;;
    c-rclone)
      # --disable Copy: bytes go through rclone, as through fdl-mirror (origin and mirror are
      # different stores in earnest; one s3rver here would let rclone copy server-side).
      s3_run=$((s3_run + 1))
      "${rclone_s3_env[@]}" rclone mkdir ":s3:run$s3_run-rclone"
      s3_dest[rclone]=run$s3_run-rclone
      run_timed "$name" "" "${rclone_s3_env[@]}" rclone copy :s3:origin/ ":s3:run$s3_run-rclone/mirror/" \
        --transfers "$concurrency" --checkers "$concurrency" --fast-list --disable Copy ;;
  esac
}
declare -A s3_dest

# Same files, same sizes: printed once, after the first round. Left out: fdl-mirror's
# ledger (.fdl-mirror/), and the size of refs.json, which a mirror writes itself (the same
# refs, formatted its own way).
folder_listing() { (cd "$1" && find . -path ./.fdl-mirror -prune -o -type f -printf '%P %s\n' | sort); }
sizes_only() { awk '$1 == "refs.json" {$2 = "-"} {print}' | sort; }
compare_trees() { # compare_trees SCENARIO
  local scenario=$1 f r
  if [ "$scenario" = e ] || [ "$scenario" = f ]; then
    "${rclone_rgw_env[@]}" rclone lsf -R --files-only --fast-list --format ps ":s3:${s3_dest[$scenario-fdl]}/mirror/" |
      grep -v '^\.fdl-mirror/' | tr ';' ' ' | sizes_only >"$bench_dir/$scenario-fdl.list"
    "${rclone_rgw_env[@]}" rclone lsf -R --files-only --fast-list --format ps ":s3:${s3_dest[$scenario-rclone]}/mirror/" |
      tr ';' ' ' | sizes_only >"$bench_dir/$scenario-rclone.list"
  elif [ "$scenario" = c ]; then
    "${rclone_s3_env[@]}" rclone lsf -R --files-only --fast-list --format ps ":s3:${s3_dest[fdl]}/mirror/" |
      grep -v '^\.fdl-mirror/' | tr ';' ' ' | sizes_only >"$bench_dir/c-fdl.list"
    "${rclone_s3_env[@]}" rclone lsf -R --files-only --fast-list --format ps ":s3:${s3_dest[rclone]}/mirror/" |
      tr ';' ' ' | sizes_only >"$bench_dir/c-rclone.list"
  else
    folder_listing "$bench_dir/dest-$scenario-fdl" | sizes_only >"$bench_dir/$scenario-fdl.list"
    folder_listing "$bench_dir/dest-$scenario-rclone" | sizes_only >"$bench_dir/$scenario-rclone.list"
  fi
  f=$(awk '{n++; b+=$2 + 0} END {printf "%d files, %.1f MiB", n, b/1048576}' "$bench_dir/$scenario-fdl.list")
  r=$(awk '{n++; b+=$2 + 0} END {printf "%d files, %.1f MiB", n, b/1048576}' "$bench_dir/$scenario-rclone.list")
  if cmp -s "$bench_dir/$scenario-fdl.list" "$bench_dir/$scenario-rclone.list"; then
    echo "    ($scenario) same files: fdl-mirror $f (plus its ledger), rclone $r"
  else
    echo "    ($scenario) THE TREES DIFFER: fdl-mirror $f, rclone $r" >&2
    diff "$bench_dir/$scenario-fdl.list" "$bench_dir/$scenario-rclone.list" | head -10 >&2
    exit 1
  fi
}

timed_scenarios=$(for s in $scenarios; do [ "$s" = d ] || echo "$s"; done | xargs)
echo "concurrency $concurrency; scenarios: $timed_scenarios; $rounds rounds"
# One untimed run of each tool first: tmpfs pays for its first writes, the servers warm up.
mimalloc_tool=
if [ "${BENCH_MIMALLOC:-0}" = 1 ]; then
  [ -e /usr/lib/x86_64-linux-gnu/libmimalloc.so.2 ] || { echo "BENCH_MIMALLOC=1: install libmimalloc2.0 first" >&2; exit 2; }
  mimalloc_tool=" fdl-mimalloc"
fi
tools_of() { # the tools that run in SCENARIO
  case $1 in
    a) echo "fdl-mirror rclone rclone-sha${mimalloc_tool}" ;;
    b) echo "fdl-mirror rclone rclone-sha floor${mimalloc_tool}" ;;
    *) echo "fdl-mirror rclone" ;;
  esac
}
for scenario in $timed_scenarios; do
  for tool in $(tools_of "$scenario"); do
    run_tool "$scenario" "$tool" warmup
  done
done

for round in $(seq "$rounds"); do
  # Rotate who goes first, so no tool always follows the same one.
  for scenario in $timed_scenarios; do
    order=$(tools_of "$scenario")
    [ $((round % 2)) -eq 1 ] || order=$(tr ' ' '\n' <<<"$order" | tac | xargs)
    for tool in $order; do
      run_tool "$scenario" "$tool"
    done
    read -r fs fk fc fr <"$bench_dir/$scenario-fdl-mirror.last"
    read -r rs rk rc rr <"$bench_dir/$scenario-rclone.last"
    case $scenario in
      c | e) extra="" ;;
      *) extra=", requests $fr / $rr" ;;
    esac
    echo "round $round ($scenario): fdl-mirror $fs s, rclone $rs s; CPU $fc / $rc s; peak RSS $((fk / 1024)) / $((rk / 1024)) MiB$extra"
    if [ -f "$bench_dir/$scenario-rclone-sha.last" ]; then
      read -r hs hk hc hr <"$bench_dir/$scenario-rclone-sha.last"
      echo "    rclone + sha256sum $hs s, CPU $hc s"
    fi
    if [ -f "$bench_dir/$scenario-fdl-mimalloc.last" ]; then
      read -r ms mk mc mr <"$bench_dir/$scenario-fdl-mimalloc.last"
      echo "    fdl-mirror with mimalloc $ms s, CPU $mc s, peak RSS $((mk / 1024)) MiB"
    fi
    if [ -f "$bench_dir/$scenario-floor.last" ]; then
      read -r ls lk lc lr <"$bench_dir/$scenario-floor.last"
      echo "    floor (curl | openssl dgst -sha256, the large files) $ls s, CPU $lc s"
    fi
    [ "$round" -ne 1 ] || compare_trees "$scenario"
    # Keep tmpfs small: (b) holds a GiB per destination.
    case $scenario in c | e | f) ;; *) rm -rf "$bench_dir/dest-$scenario-fdl" "$bench_dir/dest-$scenario-rclone" "$bench_dir/dest-$scenario-rsha" ;; esac
  done
done

# --- (d) the poll cost -----------------------------------------------------------------------
if has a || has d; then
  poll_dest=$bench_dir/dest-poll
  rm -rf "$poll_dest"
  "$fdl_mirror" sync "$http_base/a/" "$poll_dest" --allow-plain-http --signatures off --concurrency "$concurrency" >/dev/null
  run_timed poll-quick "" "$fdl_mirror" sync "$http_base/a/" "$poll_dest" --allow-plain-http --signatures off \
    --concurrency "$concurrency" --quick
  run_timed poll-full "" "$fdl_mirror" sync "$http_base/a/" "$poll_dest" --allow-plain-http --signatures off \
    --concurrency "$concurrency"
  rm -rf "$poll_dest"
fi

# --- summary -------------------------------------------------------------------------------
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo
echo "medians over $rounds rounds (concurrency $concurrency):"
for scenario in $timed_scenarios; do
  case $scenario in
    a) label="(a) nginx -> folder, $versions versions, $small_files x $small_bytes B" ;;
    b) label="(b) nginx -> folder, $large_files x $large_bytes B (+ $large_versions versions, $large_small_files small files)" ;;
    c) label="(c) s3rver -> s3rver, $versions versions, $s3_small_files x $small_bytes B" ;;
    e) label="(e) Ceph RGW -> Ceph RGW, $versions versions, $s3_small_files x $small_bytes B" ;;
    f) label="(f) nginx -> Ceph RGW, $versions versions, $small_files x $small_bytes B" ;;
  esac
  f=$(cut -d' ' -f1 "$bench_dir/$scenario-fdl-mirror.times" | median)
  r=$(cut -d' ' -f1 "$bench_dir/$scenario-rclone.times" | median)
  fk=$(cut -d' ' -f2 "$bench_dir/$scenario-fdl-mirror.times" | sort -n | tail -1)
  rk=$(cut -d' ' -f2 "$bench_dir/$scenario-rclone.times" | sort -n | tail -1)
  fc=$(cut -d' ' -f3 "$bench_dir/$scenario-fdl-mirror.times" | median)
  rc=$(cut -d' ' -f3 "$bench_dir/$scenario-rclone.times" | median)
  echo "$label"
  awk -v f="$f" -v r="$r" -v fk="$fk" -v rk="$rk" -v fc="$fc" -v rc="$rc" 'BEGIN {
    printf "    fdl-mirror %.2f s, rclone %.2f s: fdl-mirror / rclone = %.2f (target <= 0.80: %s)\n", f, r, f/r, (f/r <= 0.8 ? "met" : "NOT met")
    printf "    CPU (user + system, median): fdl-mirror %.2f s, rclone %.2f s\n", fc, rc
    printf "    peak RSS: fdl-mirror %.1f MiB, rclone %.1f MiB\n", fk/1024, rk/1024 }'
  if [ "$scenario" = a ] || [ "$scenario" = b ]; then
    h=$(cut -d' ' -f1 "$bench_dir/$scenario-rclone-sha.times" | median)
    hc=$(cut -d' ' -f3 "$bench_dir/$scenario-rclone-sha.times" | median)
    awk -v f="$f" -v r="$r" -v h="$h" -v hc="$hc" 'BEGIN {
      printf "    fdl-mirror / rclone = %.2f (issue 16 target <= 1.5: %s)\n", f/r, (f/r <= 1.5 ? "met" : "NOT met")
      printf "    rclone + sha256sum %.2f s (CPU %.2f s): fdl-mirror / it = %.2f (target <= 0.5: %s)\n", h, hc, f/h, (f/h <= 0.5 ? "met" : "NOT met") }'
  fi
  if [ -f "$bench_dir/$scenario-fdl-mimalloc.times" ]; then
    m=$(cut -d' ' -f1 "$bench_dir/$scenario-fdl-mimalloc.times" | median)
    mc=$(cut -d' ' -f3 "$bench_dir/$scenario-fdl-mimalloc.times" | median)
    mk=$(cut -d' ' -f2 "$bench_dir/$scenario-fdl-mimalloc.times" | sort -n | tail -1)
    awk -v m="$m" -v mc="$mc" -v mk="$mk" -v f="$f" -v fc="$fc" 'BEGIN {
      printf "    fdl-mirror with mimalloc: %.2f s (%.2f of glibc), CPU %.2f s (%.2f), peak RSS %.1f MiB\n", m, m/f, mc, mc/fc, mk/1024 }'
  fi
  if [ "$scenario" = b ]; then
    awk -v k="$fk" 'BEGIN {printf "    fdl-mirror peak RSS %.1f MiB (target < 64 MiB: %s)\n", k/1024, (k < 65536 ? "met" : "NOT met")}'
    l=$(cut -d' ' -f1 "$bench_dir/b-floor.times" | median)
    lc=$(cut -d' ' -f3 "$bench_dir/b-floor.times" | median)
    awk -v f="$f" -v l="$l" -v lc="$lc" -v n="${#large_urls[@]}" 'BEGIN {
      printf "    floor: %d large files by curl | openssl dgst -sha256, %.2f s (CPU %.2f s, the servers aside)\n", n, l, lc
      printf "    fdl-mirror at %.0f %% of the floor, the whole repository against the large files alone (target >= 90 %%: %s)\n", 100*l/f, (l/f >= 0.9 ? "met" : "NOT met") }'
  fi
  if [ "$scenario" != c ] && [ "$scenario" != e ]; then
    echo "    requests per run: fdl-mirror $(cut -d' ' -f4 "$bench_dir/$scenario-fdl-mirror.times" | median), rclone $(cut -d' ' -f4 "$bench_dir/$scenario-rclone.times" | median)"
  fi
done
if [ -f "$bench_dir/poll-quick.times" ]; then
  read -r qs qk qc qr <"$bench_dir/poll-quick.times"
  read -r ps pk pc pr <"$bench_dir/poll-full.times"
  echo "(d) re-polling the unchanged origin of (a) over HTTP:"
  awk -v s="$qs" -v r="$qr" 'BEGIN {printf "    --quick: %d requests, %.2f s (target <= 3: %s)\n", r, s, (r <= 3 ? "met" : "NOT met")}'
  awk -v s="$ps" -v r="$pr" 'BEGIN {printf "    full rerun: %d requests, %.2f s\n", r, s}'
fi
