# The daemon between real servers on loopback: an HTTP origin served by nginx, mirrored into
# S3 (s3rver; daemon_servers_rgw_test.sh runs it against Ceph RGW) with the store settings
# of the configuration alone (endpoint, path addressing, credentials_file, a request rate;
# no AWS variables, no ~/.aws). It mirrors, follows a new version, shows a
# held version's drift (and its pending data file) and its clearing, counts its HTTP requests
# by store, and when the origin server goes away counts failed passes, refused connections and
# origin_up 0, then recovers when it comes back.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

origin=$work/www/lake
"$FDL_PUBLISHER" sample "$origin"
start_nginx "$work/www"
start_s3 mirror
# Only the configuration says how to reach S3.
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION \
  AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE
export HOME=$work

cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
shutdown_timeout: 5s
defaults: { interval: 1s, jitter: 0%, signatures: off, backoff_max: 2s }
repositories:
  - name: served
    origin: http://127.0.0.1:$nginx_port/lake/
    mirror: s3://mirror/lake/
stores:
  - match: http://127.0.0.1:$nginx_port/
    allow_plain_http: true
  - match: s3://mirror/
    endpoint: http://127.0.0.1:$s3_port
    region: us-east-1
    addressing: path
    credentials_file: $work/s3-credentials
    allow_plain_http: true
    # Throttled, as a polite mirror may be: every call goes through throttled_store, whose
    # conditional writes (the lease, the refs) must reach RGW (issue 33, section 0).
    max_requests_per_second: 2000
YAML

# verify_mirror DESCRIPTION: `fdl-mirror verify` of the S3 mirror, with the server's keys.
verify_mirror() {
  expect_status 0 "$1" -- env AWS_ACCESS_KEY_ID="$s3_access_key" AWS_SECRET_ACCESS_KEY="$s3_secret_key" \
    AWS_REGION=us-east-1 AWS_ENDPOINT_URL="http://127.0.0.1:$s3_port" "$FDL_MIRROR" verify s3://mirror/lake/ \
    --allow-plain-http
}

start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="served",ref="refs/heads/main"}' == 1 45 "the HTTP origin mirrored into S3"
expect_metric 'fdl_mirror_ref_in_sync{repo="served",ref="refs/heads/dev"}' == 1 "dev in sync"
expect_metric 'fdl_mirror_ref_in_sync{repo="served",ref="refs/tags/v1"}' == 1 "v1 in sync"
expect_metric 'fdl_mirror_origin_up{repo="served"}' == 1 "the origin is up"
verify_mirror "the S3 mirror verifies"
expect_output "4 version(s) audited, 0 failed" "every version in S3"
# Every HTTP exchange counted, by the store's role (docs/metrics.md).
expect_metric 'fdl_mirror_requests_total{repo="served",store="origin",method="GET",code="200"}' '>=' 20 \
  "the origin's files read with GET, 200"
expect_metric 'fdl_mirror_requests_total{repo="served",store="mirror",method="PUT",code="200"}' '>=' 20 \
  "the mirror's files written with PUT, 200"
expect_series 'fdl_mirror_request_errors_total{repo="served"}' == 0 "no request failed"
expect_metric 'fdl_mirror_pending_files{repo="served"}' == 0 "nothing pending"
# The repository's lease (docs/operations.md, "Running several instances"): RGW honours
# conditional writes; s3rver does not, which coordination: auto says and goes on with.
expect_metric 'fdl_mirror_lease_held{repo="served"}' == 1 "the daemon holds the repository's lease"
if [ "${FDL_TEST_S3_SERVER:-s3rver}" = rgw ]; then
  [ "$(log_lines_with 0 repo=served 'lease taken')" -eq 1 ] && pass || fail "RGW: the lease taken, once"
  [ "$(log_lines_with 0 'does not honour conditional writes')" -eq 0 ] && pass ||
    fail "RGW: taken for a store that ignores conditional writes"
else
  [ "$(log_lines_with 0 repo=served 'does not honour conditional writes')" -eq 1 ] && pass ||
    fail "s3rver: no warning that it ignores conditional writes"
  # A second daemon (another instance, its own state_dir) on the same store sees the first
  # one's lease and stands by: coordination: auto runs one daemon knowingly on a store that
  # cannot fence two, and this one writes nothing.
  first_daemon=("$daemon_pid" "$daemon_port" "$daemon_log" "$daemon_notes")
  sed -e "s#^state_dir: .*#state_dir: $work/state-second#" \
    -e 's/^defaults:/coordination: { instance: second }\ndefaults:/' "$work/mirror.yaml" >"$work/second.yaml"
  start_daemon "$work/second.yaml"
  wait_for_log 20 "a second daemon on s3rver stands by" 0 repo=served 'standing by'
  scrape
  expect_metric 'fdl_mirror_lease_held{repo="served"}' == 0 "the second daemon holds no lease"
  expect_metric 'fdl_mirror_copied_files_total{repo="served"}' == 0 "the second daemon copied nothing"
  expect_series 'fdl_mirror_requests_total{repo="served",store="mirror",method="PUT"}' == 0 \
    "the second daemon wrote nothing to the mirror"
  stop_daemon TERM 10
  expect_clean_exit "SIGTERM, the second daemon"
  daemon_pid=${first_daemon[0]} daemon_port=${first_daemon[1]} daemon_log=${first_daemon[2]}
  daemon_notes=${first_daemon[3]} daemon_status=
fi

# --- a new version follows ------------------------------------------------------------------------
stage "$origin"
"$FDL_PUBLISHER" add "$work/stage" dev 3000 >/dev/null
scrape
files=$(metric 'fdl_mirror_copied_files_total{repo="served"}')
install_staged "$origin"
wait_for_metric 'fdl_mirror_copied_files_total{repo="served"}' '>' "$files" 20 "the new version copied into S3"
expect_metric 'fdl_mirror_ref_in_sync{repo="served",ref="refs/heads/dev"}' == 1 "dev in sync with the new version"
verify_mirror "the S3 mirror verifies with the new version"
expect_output "5 version(s) audited, 0 failed" "the new version audited"

# --- a held version: drift appears, then clears ------------------------------------------------------
stage "$origin"
"$FDL_PUBLISHER" add "$work/stage" main 1000 >/dev/null
data=$(staged_new_files "$origin" | grep '^\./data/')
printf 'x' >>"$work/stage/$data"
install_staged "$origin"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="served",ref="refs/heads/main"}' == 0 20 "drift appears"
expect_metric 'fdl_mirror_ref_versions_behind{repo="served",ref="refs/heads/main"}' == 1 "one version behind"
expect_metric 'fdl_mirror_versions_held{repo="served",reason="size_mismatch"}' == 1 "held for the data file's size"
expect_metric 'fdl_mirror_pending_files{repo="served"}' == 1 "the held version's data file pending"
expect_metric 'fdl_mirror_pending_bytes{repo="served"}' == 1000 "its bytes, as its catalog says"
truncate -s 1000 "$origin/$data"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="served",ref="refs/heads/main"}' == 1 20 "drift clears"
expect_metric 'fdl_mirror_versions_held{repo="served",reason="size_mismatch"}' == 0 "nothing held any more"
expect_metric 'fdl_mirror_pending_files{repo="served"}' == 0 "nothing pending any more"
expect_metric 'fdl_mirror_pending_bytes{repo="served"}' == 0 "no byte pending any more"

# --- the origin server goes away, and comes back ----------------------------------------------------
stop_nginx
lines=$(log_length)
wait_for_metric 'fdl_mirror_origin_up{repo="served"}' == 0 20 "origin_up drops to 0"
expect_metric 'fdl_mirror_passes_total{repo="served",result="failed"}' '>=' 1 "a failed pass counted"
wait_for_log 5 "a failed pass logged" "$lines" repo=served 'pass failed'
expect_metric 'fdl_mirror_request_errors_total{repo="served",store="origin",kind="connect"}' '>=' 1 \
  "refused connections counted as request errors"
expect_metric 'fdl_mirror_ref_in_sync{repo="served",ref="refs/heads/main"}' == 1 "a pass that stopped early keeps the last drift values"
restart_nginx
scrape
ok=$(metric 'fdl_mirror_passes_total{repo="served",result="ok"}')
wait_for_metric 'fdl_mirror_passes_total{repo="served",result="ok"}' '>' "$ok" 20 "passes succeed again"
expect_metric 'fdl_mirror_origin_up{repo="served"}' == 1 "origin_up back to 1"

stop_daemon TERM 10
expect_clean_exit "SIGTERM"
verify_mirror "the S3 mirror verifies at the end"
# The least memory budget, many checks at once: the reads stay within it and still succeed.
expect_status 0 "the S3 mirror verifies within --memory-limit 16MiB" -- env AWS_ACCESS_KEY_ID="$s3_access_key" \
  AWS_SECRET_ACCESS_KEY="$s3_secret_key" AWS_REGION=us-east-1 AWS_ENDPOINT_URL="http://127.0.0.1:$s3_port" \
  "$FDL_MIRROR" verify s3://mirror/lake/ --allow-plain-http --memory-limit 16MiB --concurrency 16

# --- coordination: leases refuses a store that ignores conditional writes -----------------------------
if [ "${FDL_TEST_S3_SERVER:-s3rver}" != rgw ]; then
  sed 's/^defaults:/coordination: { mode: leases }\ndefaults:/' "$work/mirror.yaml" >"$work/leases.yaml"
  "$FDL_PUBLISHER" add "$origin" main 500 >/dev/null
  start_daemon "$work/leases.yaml"
  wait_for_metric 'fdl_mirror_passes_total{repo="served",result="failed"}' '>=' 1 20 "the pass fails"
  expect_metric 'fdl_mirror_copied_files_total{repo="served"}' == 0 "nothing copied"
  wait_for_log 5 "the refusal names the store and the reason" 0 repo=served \
    's3://mirror/lake/ does not honour conditional writes (If-None-Match and If-Match on PUT), which coordination: leases needs'
  stop_daemon TERM 10
fi
finish
