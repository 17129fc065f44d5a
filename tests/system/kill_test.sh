# Crash consistency with the real binary: SIGKILL right after each write of a pass
# (FDL_MIRROR_TEST_KILL_AFTER_WRITES), check what a reader sees, rerun, compare.
source "$(dirname "$0")/lib.sh"

"$FDL_PUBLISHER" sample "$work/origin"
"$FDL_PUBLISHER" add "$work/origin" main 20000 >/dev/null
"$FDL_PUBLISHER" add "$work/origin" dev 30000 >/dev/null

n=1
while :; do
  rm -rf "$work/mirror"
  status=0
  FDL_MIRROR_TEST_KILL_AFTER_WRITES=$n "$FDL_MIRROR" sync "$work/origin" "$work/mirror" >/dev/null 2>&1 || status=$?
  if [ "$status" -eq 0 ]; then
    break # the pass has fewer than n writes: every write was a kill point
  fi
  if [ "$status" -ne 137 ]; then fail "kill after write $n: exit $status, want 137"; break; fi
  expect_status 0 "consistent after a kill at write $n" -- "$FDL_PUBLISHER" check "$work/mirror"
  expect_status 0 "rerun after a kill at write $n" -- "$FDL_MIRROR" sync "$work/origin" "$work/mirror"
  expect_status 0 "consistent after the rerun ($n)" -- "$FDL_PUBLISHER" check "$work/mirror"
  if ! diff -r -x refs.json -x .fdl-mirror "$work/origin" "$work/mirror" >/dev/null; then fail "mirror differs after rerun ($n)"; fi
  n=$((n + 1))
  [ "$n" -lt 300 ] || { fail "the pass never finished"; break; }
done
echo "killed at each of $((n - 1)) writes"
[ "$n" -gt 20 ] || fail "expected more than 20 writes in the pass, saw $((n - 1))"
finish
