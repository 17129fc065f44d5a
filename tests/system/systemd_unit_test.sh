# The systemd side, without a running systemd: `cmake --install` puts every file in place; the
# installed unit keeps the daemon's contract, passes `systemd-analyze verify` without a word and
# rates at most 2.0 in `systemd-analyze security`; the sysusers.d and tmpfiles.d files make the
# user and the directories in a temporary root. Runs as root (tmpfiles gives files away).
: "${FDL_PUBLISHER:=unused}"   # lib.sh asks for it; these checks run no repository
source "$(dirname "$0")/lib.sh"
: "${SOURCE_DIR:?set by ctest}"
build=$(dirname "$FDL_MIRROR")   # the binary is built at the top of its build tree
root=$work/prefix

# --- cmake --install: each file where systemd and the guide expect it ----------------------
expect_status 0 "cmake --install into a temporary prefix" -- cmake --install "$build" --prefix "$root"
[ -x "$root/bin/fdl-mirror" ] && pass || fail "cmake --install: bin/fdl-mirror missing"
# The installed binary runs on its own: libssh 0.12 (and DuckDB) from the private folder
# beside it, not Debian's libssh 0.10 nor the build tree (a service cannot see /root).
version=$(env -i "$root/bin/fdl-mirror" --version 2>&1) || true
case $version in
  *"libssh 0.12"*) pass ;;
  *) fail "the installed binary does not run with its own libssh 0.12: $version" ;;
esac
unit=$root/lib/systemd/system/fdl-mirror.service
[ -f "$unit" ] && pass || fail "cmake --install: lib/systemd/system/fdl-mirror.service missing"
while read -r installed source; do
  if cmp -s "$root/$installed" "$SOURCE_DIR/$source"; then pass; else
    fail "cmake --install: $installed missing or not a copy of $source"
  fi
done <<'EOF'
lib/sysusers.d/fdl-mirror.conf systemd/fdl-mirror.sysusers
lib/tmpfiles.d/fdl-mirror.conf systemd/fdl-mirror.tmpfiles
share/fdl-mirror/grafana/fdl-mirror.json systemd/fdl-mirror.grafana.json
share/doc/fdl-mirror/config.example.yaml systemd/config.example.yaml
share/doc/fdl-mirror/operations.md docs/operations.md
EOF

# The alert rules: the source's, with absolute runbook URLs into the installed guide, or
# into the page FDL_MIRROR_RUNBOOK_URL names at install time.
installed_rules=$root/share/fdl-mirror/fdl-mirror.rules.yml
sed "s|runbook_url: docs/operations.md#|runbook_url: file://$root/share/doc/fdl-mirror/operations.md#|" \
  "$SOURCE_DIR/systemd/fdl-mirror.rules.yml" >"$work/want-rules.yml"
cmp -s "$installed_rules" "$work/want-rules.yml" && pass ||
  fail "the installed rules are not the source's with file:// runbook URLs: $(diff "$work/want-rules.yml" "$installed_rules" | head -5)"
grep -q 'runbook_url: docs/' "$installed_rules" && fail "the installed rules keep relative runbook URLs" || pass
expect_status 0 "cmake --install with FDL_MIRROR_RUNBOOK_URL" -- \
  env FDL_MIRROR_RUNBOOK_URL=https://wiki.example.org/ops/fdl-mirror cmake --install "$build" --prefix "$work/wiki"
[ "$(grep -c 'runbook_url: https://wiki.example.org/ops/fdl-mirror#fdlmirror' "$work/wiki/share/fdl-mirror/fdl-mirror.rules.yml")" = \
  "$(grep -c '^ *runbook_url:' "$SOURCE_DIR/systemd/fdl-mirror.rules.yml")" ] && pass ||
  fail "not every runbook_url points into https://wiki.example.org/ops/fdl-mirror"
expect_status 1 "cmake --install refuses a runbook URL that is not absolute" -- \
  env FDL_MIRROR_RUNBOOK_URL=ops/fdl-mirror cmake --install "$build" --prefix "$work/relative"
promtool=$(command -v promtool || echo "$(dirname "$FDL_MIRROR")/deps/promtool/promtool")
if [ -x "$promtool" ]; then
  expect_status 0 "promtool accepts the installed rules" -- "$promtool" check rules "$installed_rules"
else fail "promtool not found: run scripts/setup"; fi

# The unit is written at install time, for the prefix in force then.
grep -q '@[A-Z_]*@' "$unit" && fail "the installed unit has unsubstituted @VARIABLES@" || pass
grep -qx "ExecStart=$root/bin/fdl-mirror run --config /etc/fdl-mirror/config.yaml" "$unit" && pass ||
  fail "the installed unit's ExecStart= is not $root/bin/fdl-mirror run --config …"
# A package stages with DESTDIR: the unit names the real prefix, not the staging folder.
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
expect_status 0 "cmake --install with DESTDIR" -- env DESTDIR="$work/stage" cmake --install "$build"
grep -qx "ExecStart=$prefix/bin/fdl-mirror run --config /etc/fdl-mirror/config.yaml" \
  "$work/stage$prefix/lib/systemd/system/fdl-mirror.service" && pass ||
  fail "a DESTDIR install's unit does not run $prefix/bin/fdl-mirror"

# --- the daemon's contract with systemd -----------------------------------------------------
# READY=1 and the rest come from the main process; a bad configuration (exit 78) must not be
# restarted in a loop; SIGHUP reloads; the stop timeout exceeds shutdown_timeout's 30 s.
for line in 'Type=notify' 'NotifyAccess=main' 'WatchdogSec=60' 'Restart=on-failure' \
  'RestartPreventExitStatus=78' 'ExecReload=/bin/kill -HUP $MAINPID' 'User=fdl-mirror' \
  'StateDirectory=fdl-mirror' 'ProtectSystem=strict' 'CapabilityBoundingSet=' \
  'SystemCallFilter=@system-service'; do
  grep -qxF -- "$line" "$unit" && pass || fail "the unit lacks the line $line"
done
# RestartPreventExitStatus= does not cover ExecStartPre= (systemd issue 11868): a failing check
# there would restart in a loop, so the daemon checks its configuration itself.
grep -q '^ExecStartPre=' "$unit" && fail "the unit has an ExecStartPre=, which restarts in a loop when it fails" || pass
stop=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)s\{0,1\}$/\1/p' "$unit")
[ -n "$stop" ] && [ "$stop" -gt 30 ] && pass || fail "TimeoutStopSec= is '$stop', want seconds above the daemon's 30 s shutdown_timeout"

# --- systemd-analyze ------------------------------------------------------------------------
# verify reports unknown keys and bad values on stderr and still exits 0: any output fails.
expect_status 0 "systemd-analyze verify" -- systemd-analyze verify --man=no "$unit"
if [ -s "$work/out" ] || [ -s "$work/err" ]; then
  fail "systemd-analyze verify has something to say"
  cat "$work/out" "$work/err" | sed 's/^/  verify: /' >&2
else pass; fi
# --threshold is the exposure level times ten: 20 means at most 2.0.
expect_status 0 "systemd-analyze security at or below 2.0" -- \
  systemd-analyze security --offline=true --threshold=20 "$unit"
score=$(sed -n 's/^.*Overall exposure level for fdl-mirror.service: \([0-9.]*\).*$/\1/p' "$work/out")
if awk -v s="$score" 'BEGIN { exit !(s != "" && s + 0 <= 2.0) }'; then
  pass
  echo "systemd-analyze security: overall exposure level $score"
else
  fail "systemd-analyze security: overall exposure level '$score', want at most 2.0"
  grep -F '✗' "$work/out" | sed 's/^/  security: /' >&2
fi

# --- sysusers.d and tmpfiles.d, applied to a temporary root ---------------------------------
sysroot=$work/sysroot
mkdir -p "$sysroot/etc"
expect_status 0 "systemd-sysusers" -- systemd-sysusers --root="$sysroot" "$root/lib/sysusers.d/fdl-mirror.conf"
IFS=: read -r _ _ uid gid _ home shell < <(grep '^fdl-mirror:' "$sysroot/etc/passwd") || true
[ -n "${uid:-}" ] && [ "$uid" -lt 1000 ] && pass || fail "systemd-sysusers made no system user fdl-mirror"
[ "${home:-}" = /var/lib/fdl-mirror ] && pass || fail "fdl-mirror's home is '${home:-}', want /var/lib/fdl-mirror"
[ "${shell:-}" = /usr/sbin/nologin ] && pass || fail "fdl-mirror's shell is '${shell:-}', want /usr/sbin/nologin"
grep -q "^fdl-mirror:x:${gid:-none}:" "$sysroot/etc/group" && pass || fail "systemd-sysusers made no group fdl-mirror"

expect_status 0 "systemd-tmpfiles --create" -- \
  systemd-tmpfiles --root="$sysroot" --create "$root/lib/tmpfiles.d/fdl-mirror.conf"
[ ! -s "$work/err" ] && pass || fail "systemd-tmpfiles complains: $(cat "$work/err")"
while read -r path want; do
  got=$(stat -c '%a %u:%g' "$sysroot$path" 2>/dev/null || echo missing)
  want=${want//USER/${uid:-none}}
  want=${want//GROUP/${gid:-none}}
  [ "$got" = "$want" ] && pass || fail "tmpfiles: $path is '$got', want '$want'"
done <<'EOF'
/var/lib/fdl-mirror 750 USER:GROUP
/etc/fdl-mirror 750 0:GROUP
/etc/fdl-mirror/keys 750 0:GROUP
/etc/fdl-mirror/credentials 700 0:0
EOF

finish
