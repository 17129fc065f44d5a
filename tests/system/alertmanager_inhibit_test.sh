# The shipped Alertmanager inhibition rules (systemd/fdl-mirror.alertmanager.yml, issue 33,
# section 1): amtool accepts the file, and a real Alertmanager (Debian's package, which
# scripts/setup unpacks) fed with fdl-mirror's alerts through amtool suppresses exactly
# those a firing cause explains: the daemon down silences its instance's alerts, an origin
# or a mirror unreachable silences that repository's Stale, PassesFailing and Behind; and
# nothing else (other repositories, other instances, the alerts aggregated over daemons).
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
alert FdlMirrorOriginUnreachable instance=a:9464 repo=population severity=warning
alert FdlMirrorStale instance=a:9464 repo=population severity=warning
alert FdlMirrorPassesFailing instance=a:9464 repo=population severity=warning
alert FdlMirrorBehind instance=a:9464 repo=population ref=refs/heads/main severity=warning
alert FdlMirrorStale instance=a:9464 repo=weather severity=warning
alert FdlMirrorSignatureFailure instance=a:9464 repo=population severity=critical
alert FdlMirrorDown instance=b:9464 severity=critical
alert FdlMirrorVersionsHeld instance=b:9464 repo=towns version=v9 reason=size_mismatch severity=warning
alert FdlMirrorUnmirrored repo=towns severity=critical
alert FdlMirrorMirrorUnreachable instance=a:9464 repo=lake severity=critical
alert FdlMirrorStale instance=a:9464 repo=lake severity=warning
alert FdlMirrorOriginUnreachable instance=a:9464 repo=lake severity=warning

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
    ("FdlMirrorOriginUnreachable", "a:9464", "population"): "active",
    ("FdlMirrorStale", "a:9464", "population"): "inhibited",
    ("FdlMirrorPassesFailing", "a:9464", "population"): "inhibited",
    ("FdlMirrorBehind", "a:9464", "population"): "inhibited",
    ("FdlMirrorStale", "a:9464", "weather"): "active",
    ("FdlMirrorSignatureFailure", "a:9464", "population"): "active",
    ("FdlMirrorDown", "b:9464", ""): "active",
    ("FdlMirrorVersionsHeld", "b:9464", "towns"): "inhibited",
    ("FdlMirrorUnmirrored", "", "towns"): "active",
    ("FdlMirrorMirrorUnreachable", "a:9464", "lake"): "active",
    ("FdlMirrorStale", "a:9464", "lake"): "inhibited",
    ("FdlMirrorOriginUnreachable", "a:9464", "lake"): "inhibited",
}
assert state == expected, {k: (state.get(k), v) for k, v in expected.items() if state.get(k) != v} or state
PY
finish
