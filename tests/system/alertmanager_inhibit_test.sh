# The shipped Alertmanager inhibition rules (systemd/fdl-mirror.alertmanager.yml, issue 33,
# section 1): amtool accepts the file, and a real Alertmanager (Debian's package, which
# scripts/setup unpacks) fed with fdl-mirror's alerts through amtool suppresses exactly
# those a firing cause explains: the daemon down silences its own alerts (those with its
# instance), an origin or a mirror unreachable silences that repository's Stale,
# PassesFailing and Behind; and nothing else (other repositories, other instances, the
# repositories' alerts, which are aggregated over the daemons and carry no instance).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"
config=$SOURCE_DIR/systemd/fdl-mirror.alertmanager.yml

# alertmanager and amtool: installed, else where scripts/setup unpacks them.
alertmanager=$(command -v prometheus-alertmanager || true)
amtool=$(command -v amtool || true)
for dir in "$(dirname "$FDL_MIRROR")/deps/alertmanager" "$SOURCE_DIR/build/deps/alertmanager"; do
  [ -n "$alertmanager" ] || { [ -x "$dir/alertmanager" ] && alertmanager=$dir/alertmanager && amtool=$dir/amtool; }
done
if [ -z "$alertmanager" ] || [ -z "$amtool" ]; then
  fail "alertmanager or amtool not found: run scripts/setup"
  finish
  exit 1
fi

expect_status 0 "amtool check-config" -- "$amtool" check-config "$config"
expect_output "3 inhibit rules" "the three rules are read"

# Debian's build reads its default template from /usr/share/prometheus/alertmanager; when
# the package is unpacked rather than installed, it gets them there in a mount namespace of
# its own (a tmpfs over /usr/share that only it sees), so nothing is installed on the host.
port=$(free_port)
mkdir -p "$work/am"
run_alertmanager=("$alertmanager" "--config.file=$config" "--storage.path=$work/am"
                  "--web.listen-address=127.0.0.1:$port" "--cluster.listen-address=")
if [ -f /usr/share/prometheus/alertmanager/default.tmpl ]; then
  "${run_alertmanager[@]}" >"$work/am.log" 2>&1 &
else
  templates=$(dirname "$alertmanager")/templates
  namespace=(unshare --mount --propagation private)
  [ "$(id -u)" = 0 ] || namespace=(unshare --user --map-root-user --mount --propagation private)
  "${namespace[@]}" sh -c 'mount -t tmpfs fdl-mirror-test /usr/share && mkdir -p /usr/share/prometheus &&
    cp -r "$1" /usr/share/prometheus/alertmanager && shift && exec "$@"' sh "$templates" "${run_alertmanager[@]}" \
    >"$work/am.log" 2>&1 &
fi
bg_pids+=("$!")
wait_until 20 "alertmanager listens" 'accepting "$port"'
url=--alertmanager.url=http://127.0.0.1:$port

# alert NAME LABEL=VALUE...: fires NAME with the job's labels and these.
alert() { "$amtool" alert add "alertname=$1" job=fdl-mirror "${@:2}" "$url" || fail "amtool alert add $*"; }
# The alerts of a repository carry job and repo, not instance (aggregated over the daemons,
# so that a failover moves none); those of one daemon carry instance.
alert FdlMirrorOriginUnreachable repo=population severity=warning
alert FdlMirrorStale repo=population severity=warning
alert FdlMirrorPassesFailing repo=population severity=warning
alert FdlMirrorBehind repo=population ref=refs/heads/main severity=warning
alert FdlMirrorStale repo=weather severity=warning
alert FdlMirrorSignatureFailure repo=population severity=critical
alert FdlMirrorDown instance=b:9464 severity=critical
alert FdlMirrorReloadRefused instance=b:9464 severity=warning
alert FdlMirrorLeaseLost instance=b:9464 repo=towns severity=warning
alert FdlMirrorReloadRefused instance=a:9464 severity=warning
alert FdlMirrorVersionsHeld repo=towns version=v9 reason=size_mismatch severity=warning
alert FdlMirrorUnmirrored repo=towns severity=critical
alert FdlMirrorMirrorUnreachable repo=lake severity=critical
alert FdlMirrorStale repo=lake severity=warning
alert FdlMirrorOriginUnreachable repo=lake severity=warning
sleep 1
expect_status 0 "amtool alert query, inhibited ones included" -- "$amtool" alert query --inhibited --active -o json "$url"
"$python" - "$work/out" <<'PY' && pass || fail "the suppressed alerts are not the expected ones: $(cat "$work/out")"
import json, sys
alerts = json.load(open(sys.argv[1]))
state = {}
for a in alerts:
    l = a["labels"]
    key = (l["alertname"], l.get("instance", ""), l.get("repo", ""))
    state[key] = "inhibited" if a["status"]["inhibitedBy"] else a["status"]["state"]
expected = {
    ("FdlMirrorOriginUnreachable", "", "population"): "active",
    ("FdlMirrorStale", "", "population"): "inhibited",
    ("FdlMirrorPassesFailing", "", "population"): "inhibited",
    ("FdlMirrorBehind", "", "population"): "inhibited",
    ("FdlMirrorStale", "", "weather"): "active",
    ("FdlMirrorSignatureFailure", "", "population"): "active",
    ("FdlMirrorDown", "b:9464", ""): "active",
    ("FdlMirrorReloadRefused", "b:9464", ""): "inhibited",   # the down daemon's own
    ("FdlMirrorLeaseLost", "b:9464", "towns"): "inhibited",
    ("FdlMirrorReloadRefused", "a:9464", ""): "active",      # another daemon's
    ("FdlMirrorVersionsHeld", "", "towns"): "active",        # the repository's: another daemon may hold it
    ("FdlMirrorUnmirrored", "", "towns"): "active",
    ("FdlMirrorMirrorUnreachable", "", "lake"): "active",
    ("FdlMirrorStale", "", "lake"): "inhibited",
    ("FdlMirrorOriginUnreachable", "", "lake"): "inhibited",
}
assert state == expected, {k: (state.get(k), v) for k, v in expected.items() if state.get(k) != v} or state
PY
finish
