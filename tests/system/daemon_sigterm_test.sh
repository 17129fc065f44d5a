# SIGTERM in the middle of a large copy: an HTTP origin served by nginx on loopback, read at
# 2 MiB/s (the store's max_bytes_per_second), with a new version holding a 20 MiB data file.
# Once the daemon is writing that file into the mirror it is sent SIGTERM: it says STOPPING=1,
# exits 0 within shutdown_timeout and a little, and leaves the mirror consistent (no ref to a
# version not wholly there, `fdl-mirror verify` clean, no temporary file left in sight). A
# second start finishes the work: the mirror in sync, verified, equal to the origin.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

origin=$work/www/lake
mirror=$work/mirror
"$FDL_PUBLISHER" sample "$origin"
start_nginx "$work/www"
url=http://127.0.0.1:$nginx_port/lake/
# The versions already mirrored, at full speed.
expect_status 0 "the first sync over HTTP" -- "$FDL_MIRROR" sync "$url" "$mirror" --allow-plain-http
old_main=$(ref_of "$mirror" refs/heads/main)
big=$("$FDL_PUBLISHER" add "$origin" main $((20 * 1024 * 1024)))

cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
shutdown_timeout: 2s
defaults: { interval: 1s, jitter: 0%, signatures: off }
repositories:
  - name: large
    origin: $url
    mirror: $mirror
stores:
  - match: http://127.0.0.1:$nginx_port/
    allow_plain_http: true
    max_bytes_per_second: 2MiB
YAML

# copy_progress: the most bytes the daemon has written so far into one file it holds open
# under the mirror's data folder (an O_TMPFILE shows as "…/#123 (deleted)"), 0 when none.
copy_progress() {
  local fd target most=0 pos
  for fd in /proc/"$daemon_pid"/fd/*; do
    target=$(readlink "$fd" 2>/dev/null) || continue
    case $target in "$mirror"/data/*) ;; *) continue ;; esac
    pos=$(awk '$1 == "pos:" { print $2 }' "/proc/$daemon_pid/fdinfo/${fd##*/}" 2>/dev/null) || continue
    [ "${pos:-0}" -gt "$most" ] && most=$pos
  done
  echo "$most"
}

# --- SIGTERM mid-copy ----------------------------------------------------------------------------
start_daemon "$work/mirror.yaml"
wait_until 30 "the daemon is copying the large data file" '[ "$(copy_progress)" -ge $((2 * 1024 * 1024)) ]'
echo "SIGTERM with $(copy_progress) bytes of the large file written"
stop_daemon TERM 10
expect_clean_exit "SIGTERM in the middle of a copy"
less_than "$daemon_stop_seconds" 5 && pass ||
  fail "the daemon took ${daemon_stop_seconds}s to exit after SIGTERM; shutdown_timeout is 2s"
wait_for_note STOPPING=1 5 "STOPPING=1 on SIGTERM"
expect_status 0 "the interrupted mirror is consistent" -- "$FDL_PUBLISHER" check "$mirror"
expect_status 0 "fdl-mirror verify the interrupted mirror" -- "$FDL_MIRROR" verify "$mirror"
[ "$(ref_of "$mirror" refs/heads/main)" = "$old_main" ] && pass ||
  fail "main moved to $(ref_of "$mirror" refs/heads/main) although the copy was cut"
[ ! -e "$mirror/versions/$big/version.json" ] && pass || fail "the version whose copy was cut is published"
leftovers=$(find "$mirror" -name '.fdl-tmp-*' | head -n 5)
[ -z "$leftovers" ] && pass || fail "temporary files left in the mirror: $leftovers"

# --- the next start finishes the work ------------------------------------------------------------
start_daemon "$work/mirror.yaml"
wait_for_metric 'fdl_mirror_ref_in_sync{repo="large",ref="refs/heads/main"}' == 1 45 "the restarted daemon finishes the copy"
expect_metric 'fdl_mirror_ref_versions_behind{repo="large",ref="refs/heads/main"}' == 0 "nothing behind"
expect_metric 'fdl_mirror_copied_bytes_total{repo="large"}' '>=' $((20 * 1024 * 1024)) "the large file counted"
[ "$(ref_of "$mirror" refs/heads/main)" = "$big" ] && pass || fail "main is not the large version after the restart"
stop_daemon TERM 10
expect_clean_exit "SIGTERM once in sync"
expect_status 0 "the finished mirror is consistent" -- "$FDL_PUBLISHER" check "$mirror"
expect_status 0 "fdl-mirror verify the finished mirror" -- "$FDL_MIRROR" verify "$mirror"
expect_output "5 version(s) audited, 0 failed" "verify audits every version"
if diff -r -x refs.json -x .fdl-mirror "$origin" "$mirror" >/dev/null; then pass; else
  fail "the mirror differs from the origin: $(diff -rq -x refs.json -x .fdl-mirror "$origin" "$mirror" | head -n 5)"
fi
finish
