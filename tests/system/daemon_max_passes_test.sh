# max_passes, threads and memory_limit (issue 16): six repositories due at once with
# max_passes: 2 never run more than two passes together; the others wait their turn
# (fdl_mirror_passes_waiting), first come first served, and every one of them passes. The
# daemon's threads stay within the configured pool (threads: 2, plus the I/O thread, one
# catalog reader and the query watchdog) whatever passes; the transfer memory is exported
# and a reload changes it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

repos=(a b c d e f)
{
  echo "listen: 127.0.0.1:0"
  echo "state_dir: $work/state"
  echo "max_passes: 2"
  echo "threads: 2"
  echo "memory_limit: 128MiB"
  echo "defaults: { interval: 1h, signatures: off }"
  echo "repositories:"
  for r in "${repos[@]}"; do
    "$FDL_PUBLISHER" sample "$work/$r-origin" >/dev/null
    echo "  - { name: $r, origin: $work/$r-origin, mirror: $work/$r-mirror }"
  done
} >"$work/mirror.yaml"

start_daemon "$work/mirror.yaml"
most=0 waited=0 done_count=0 most_threads=0
for ((i = 0; i < 1200 && done_count < ${#repos[@]}; i++)); do
  threads=$(awk '$1 == "Threads:" { print $2 }' "/proc/$daemon_pid/status")
  [ "$threads" -gt "$most_threads" ] && most_threads=$threads
  scrape 2>/dev/null || continue
  running=$(metric fdl_mirror_passes_running)
  waiting=$(metric fdl_mirror_passes_waiting)
  [ "$running" = absent ] && continue
  [ "${running%.*}" -gt "$most" ] && most=${running%.*}
  [ "${waiting%.*}" -gt "$waited" ] && waited=${waiting%.*}
  done_count=0
  for r in "${repos[@]}"; do
    [ "$(metric "fdl_mirror_passes_total{repo=\"$r\",result=\"ok\"}")" = 1 ] && done_count=$((done_count + 1))
  done
  sleep 0.02
done
echo "at most $most passes at once, at most $waited waiting; $done_count of ${#repos[@]} passed"
[ "$done_count" -eq ${#repos[@]} ] && pass || fail "only $done_count of ${#repos[@]} repositories passed"
[ "$most" -le 2 ] && pass || fail "$most passes ran at once with max_passes: 2"
[ "$most" -ge 1 ] && pass || fail "no pass was ever seen running"
[ "$waited" -ge 1 ] && pass || fail "no repository was seen waiting for a slot"
echo "at most $most_threads threads"
[ "$most_threads" -le 5 ] && pass || fail "$most_threads threads: more than threads: 2, the I/O thread, a catalog reader and the watchdog"
# 128 MiB less the catalog reader's quarter (32 MiB).
expect_metric fdl_mirror_transfer_memory_limit_bytes == $((96 << 20)) "the transfer memory exported"
expect_metric fdl_mirror_transfer_memory_in_use_bytes == 0 "no transfer memory held once all passed"
expect_metric fdl_mirror_max_passes == 2 "max_passes exported"
# Each repository's versions had their catalogs read by the gate, some of them together.
expect_metric fdl_mirror_catalog_reads_total ">=" $((4 * ${#repos[@]})) "every version's catalog counted"
catalog_reads=$(metric fdl_mirror_catalog_reads_total)
catalog_batches=$(metric fdl_mirror_catalog_read_batches_total)
awk -v b="$catalog_batches" -v c="$catalog_reads" 'BEGIN { exit !(b >= 1 && b <= c) }' && pass ||
  fail "$catalog_batches batches for $catalog_reads catalogs"
scrape
expect_metric fdl_mirror_passes_running == 0 "no pass running once all passed"
expect_metric fdl_mirror_passes_waiting == 0 "none waiting"
for r in "${repos[@]}"; do
  expect_status 0 "$r's mirror verifies" -- "$FDL_MIRROR" verify "$work/$r-mirror" --signatures off
done
# A reload raises the cap at once.
sed -i 's/^max_passes: 2$/max_passes: 5/; s/^memory_limit: 128MiB$/memory_limit: 256MiB/' "$work/mirror.yaml"
kill -HUP "$daemon_pid"
wait_for_metric fdl_mirror_max_passes == 5 10 "the reloaded max_passes"
expect_metric fdl_mirror_transfer_memory_limit_bytes == $((192 << 20)) "the reloaded transfer memory"
# The reload replaced the catalog readers; the counters go on from where they were.
expect_metric fdl_mirror_catalog_reads_total ">=" "${catalog_reads%.*}" "catalog reads counted across the reload"
stop_daemon TERM 10
expect_clean_exit "SIGTERM"
finish
