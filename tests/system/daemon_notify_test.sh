# The daemon and its service manager (sd_notify's protocol, daemon/service/notify.hpp), against a fake
# NOTIFY_SOCKET: READY=1 once bound (and /readyz agrees), WATCHDOG=1 at least every half
# WATCHDOG_USEC while passes run and none without it, RELOADING=1 with MONOTONIC_USEC then
# READY=1 on each SIGHUP (a good configuration or a refused one), STOPPING=1 on SIGTERM and
# SIGINT and exit 0 within shutdown_timeout; messages in that order, all from the daemon's
# own process (NotifyAccess=main), to a path or an abstract socket.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

"$FDL_PUBLISHER" sample "$work/origin"
cat >"$work/mirror.yaml" <<YAML
listen: 127.0.0.1:0
state_dir: $work/state
shutdown_timeout: 3s
defaults: { interval: 1s, jitter: 0%, signatures: off }
repositories:
  - name: population
    origin: $work/origin
    mirror: $work/mirror
YAML
cp "$work/mirror.yaml" "$work/good.yaml"

# states FILE: the states of each message, in order, one message a line: READY=1, RELOADING=1
# and STOPPING=1 (whatever else a message carries, such as STATUS=, left out), WATCHDOG=1
# pings left out.
states() {
  notes "$1" | tr ';' '\n' | grep -x -e 'READY=1' -e 'RELOADING=1' -e 'STOPPING=1' | tr '\n' ' ' | sed 's/ $//'
}

# --- READY=1 and the watchdog ----------------------------------------------------------------
start_daemon "$work/mirror.yaml" WATCHDOG_USEC=1000000
wait_for_note READY=1 10 "READY=1 at start"
status=$(http_status /readyz)
[ "$status" = 200 ] && pass || fail "/readyz answers $status once READY=1 was sent, want 200"
first=$(notes | grep -v -x 'WATCHDOG=1' | head -n1)
case $first in READY=1 | 'READY=1;'*) pass ;; *) fail "the first message is '$first', want READY=1" ;; esac

# Pings while passes run: the first one copies the repository and reads its catalogs. (Their
# spacing is checked over the whole run, reloads included, once it is over.)
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' '>=' 2 30 "passes run while the watchdog is watched"
wait_until 15 "ten WATCHDOG=1 pings" '[ "$(notes | grep -c -x WATCHDOG=1)" -ge 10 ]'

# --- SIGHUP: a good configuration --------------------------------------------------------------
scrape
ok=$(metric 'fdl_mirror_passes_total{repo="population",result="ok"}')
before=$(wc -l <"$daemon_notes")
kill -HUP "$daemon_pid"
wait_for_note RELOADING=1 10 "RELOADING=1 on SIGHUP" "$before"
wait_for_note READY=1 10 "READY=1 after a reload" "$before"
reloading=$(tail -n +"$((before + 1))" "$daemon_notes" | grep -m1 ' RELOADING=1')
arrived=${reloading%% *}
sent=$(sed -n 's/.*;MONOTONIC_USEC=\([0-9][0-9]*\)\(;.*\)\{0,1\}$/\1/p' <<<"$reloading")
if [ -z "$sent" ]; then fail "RELOADING=1 without MONOTONIC_USEC: $reloading"; else
  # CLOCK_MONOTONIC at sending, so before the arrival and not long before.
  awk -v sent="$sent" -v arrived="$arrived" 'BEGIN { exit !(sent <= arrived + 1000 && arrived - sent < 5000000) }' && pass ||
    fail "MONOTONIC_USEC=$sent is not CLOCK_MONOTONIC when sent (arrived at $arrived)"
fi
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' '>' "$ok" 10 "passes go on after a reload"

# --- SIGHUP: a configuration refused -----------------------------------------------------------
sed 's/interval: 1s/interval: soon/' "$work/good.yaml" >"$work/mirror.yaml"
before=$(wc -l <"$daemon_notes")
kill -HUP "$daemon_pid"
wait_for_note RELOADING=1 10 "RELOADING=1 on SIGHUP with a bad configuration" "$before"
wait_for_note READY=1 10 "READY=1 after a refused reload" "$before"
scrape
ok=$(metric 'fdl_mirror_passes_total{repo="population",result="ok"}')
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' '>' "$ok" 10 "passes go on after a refused reload"

# --- SIGTERM: STOPPING=1 and exit 0 ------------------------------------------------------------
stop_daemon TERM 6
expect_clean_exit "SIGTERM"
less_than "$daemon_stop_seconds" 6 && pass || fail "exit took ${daemon_stop_seconds}s after SIGTERM, shutdown_timeout is 3s"
wait_for_note STOPPING=1 5 "STOPPING=1 on SIGTERM"
order=$(states "$daemon_notes")
want="READY=1 RELOADING=1 READY=1 RELOADING=1 READY=1 STOPPING=1"
[ "$order" = "$want" ] && pass || fail "notifications came as '$order', want '$want'"
# From READY=1 to STOPPING=1, each ping within half of WATCHDOG_USEC of the last (0.5 s, with
# 0.25 s for a loaded machine).
gaps=$(awk '$3 ~ /^STOPPING=1/ { exit }
            $3 == "READY=1" || $3 ~ /^READY=1;/ { ready = 1 }
            ready && $3 == "WATCHDOG=1" { if (last) printf "%.3f ", ($1 - last) / 1e6; last = $1 }' "$daemon_notes")
longest=$(tr ' ' '\n' <<<"$gaps" | sort -g | tail -n1)
less_than "${longest:-99}" 0.75 && pass || fail "WATCHDOG=1 pings came as far as ${longest}s apart with WATCHDOG_USEC=1000000: $gaps"
senders=$(cut -d' ' -f2 "$daemon_notes" | sort -u | tr '\n' ' ')
[ "$senders" = "$daemon_pid " ] && pass || fail "notifications came from pid(s) $senders, not only the daemon's $daemon_pid (NotifyAccess=main)"

# --- no WATCHDOG_USEC, an abstract socket, SIGINT ------------------------------------------------
cp "$work/good.yaml" "$work/mirror.yaml"
notify_socket=@fdl-mirror-notify-test-$$
start_daemon "$work/mirror.yaml"
wait_for_note READY=1 10 "READY=1 on an abstract socket"
scrape
ok=$(metric 'fdl_mirror_passes_total{repo="population",result="ok"}')
wait_for_metric 'fdl_mirror_passes_total{repo="population",result="ok"}' '>=' "$((${ok/absent/0} + 2))" 15 "two more passes"
[ "$(notes | grep -c -x 'WATCHDOG=1')" -eq 0 ] && pass || fail "WATCHDOG=1 sent without WATCHDOG_USEC"
stop_daemon INT 6
expect_clean_exit "SIGINT"
wait_for_note STOPPING=1 5 "STOPPING=1 on SIGINT"
order=$(states "$daemon_notes")
[ "$order" = "READY=1 STOPPING=1" ] && pass || fail "notifications came as '$order', want 'READY=1 STOPPING=1'"

finish
