# The Prometheus alert rules (systemd/fdl-mirror.rules.yml): promtool accepts them, and its unit
# tests in tests/data/alerts/ pass, with for every alert a case where it fires and a near miss
# where it must not; every alert carries a severity, a summary, a description and a runbook
# section that docs/operations.md has.
: "${FDL_PUBLISHER:=unused}"   # lib.sh asks for it; these checks run no repository
source "$(dirname "$0")/lib.sh"
: "${SOURCE_DIR:?set by ctest}"
rules=$SOURCE_DIR/systemd/fdl-mirror.rules.yml
tests_dir=$SOURCE_DIR/tests/data/alerts
guide=$SOURCE_DIR/docs/operations.md

# promtool: on PATH, else where scripts/setup unpacks it, in this build's deps or the source
# tree's build/ (as for s3rver).
promtool=$(command -v promtool || true)
for candidate in "$(dirname "$FDL_MIRROR")/deps/promtool/promtool" "$SOURCE_DIR/build/deps/promtool/promtool"; do
  [ -n "$promtool" ] || { [ -x "$candidate" ] && promtool=$candidate; }
done
if [ -z "$promtool" ]; then
  fail "promtool not found: run scripts/setup"
  finish
  exit 1
fi

expect_status 0 "promtool check rules" -- "$promtool" check rules "$rules"
expect_output "SUCCESS" "promtool check rules"
expect_status 0 "promtool test rules" -- "$promtool" test rules "$tests_dir"/*.test.yml

# The alerts, each once (FdlMirrorDown is one rule with two conditions).
mapfile -t alerts < <(sed -n 's/^ *- alert: *\([A-Za-z]*\) *$/\1/p' "$rules" | sort -u)
[ "${#alerts[@]}" -ge 10 ] && pass || fail "expected at least 10 alerts in $rules, found ${#alerts[@]}"

# Coverage, by the test files' layout: each case writes `alertname:` and then `exp_alerts:` on
# the next line, `exp_alerts: []` when the alert must not fire, a list or an alias when it must.
cases=$(awk '/alertname:/ {name = $2; next}
             name != "" && /exp_alerts:/ {print name, ($2 == "[]" ? "quiet" : "fires"); name = ""}' \
  "$tests_dir"/*.test.yml)
for alert in "${alerts[@]}"; do
  grep -qx "$alert fires" <<<"$cases" && pass || fail "$alert: no test case where it fires"
  grep -qx "$alert quiet" <<<"$cases" && pass || fail "$alert: no near-miss test case where it stays quiet"
done

# Each rule's labels and annotations: the block from one `- alert:` to the next.
for alert in "${alerts[@]}"; do
  block=$(awk -v a="$alert" '/^ *- alert:/ {inside = ($3 == a)} inside' "$rules")
  grep -Eq '^ +severity: (critical|warning|info)$' <<<"$block" && pass || fail "$alert: no severity critical, warning or info"
  for annotation in summary description runbook_url; do
    grep -q "^ *$annotation: " <<<"$block" && pass || fail "$alert: no $annotation annotation"
  done
  anchor=$(sed -n 's|^ *runbook_url: docs/operations.md#\(.*\)$|\1|p' <<<"$block" | sort -u)
  lower=$(tr '[:upper:]' '[:lower:]' <<<"$alert")
  [ "$anchor" = "$lower" ] && pass || fail "$alert: runbook_url anchor is '$anchor', want docs/operations.md#$lower"
  grep -Eq "^#+ $alert\$" "$guide" && pass || fail "$alert: docs/operations.md has no section headed '$alert'"
done

finish
