# Shared by the system tests: the binaries come from ctest's environment.
set -euo pipefail
: "${FDL_MIRROR:?set by ctest}" "${FDL_PUBLISHER:?set by ctest}"
work=$(mktemp -d "${TMPDIR:-/tmp}/fdl-mirror-system.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Catalog copies go under $TMPDIR; a run killed on purpose leaves its copies here, not in /tmp.
mkdir -p "$work/tmp"
export TMPDIR="$work/tmp"
failures=0
passes=0

pass() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect_status WANT DESCRIPTION -- COMMAND...: runs COMMAND, output to $work/out and $work/err.
expect_status() {
  local want=$1 what=$2
  shift 3
  local got=0
  "$@" >"$work/out" 2>"$work/err" || got=$?
  if [ "$got" -eq "$want" ]; then pass; else
    fail "$what: exit $got, want $want"
    sed 's/^/  out: /' "$work/out" >&2
    sed 's/^/  err: /' "$work/err" >&2
  fi
}

# expect_output TEXT DESCRIPTION: the last command's stdout or stderr contains TEXT.
expect_output() {
  if grep -qF -- "$1" "$work/out" "$work/err"; then pass; else
    fail "$2: output lacks '$1'"
    sed 's/^/  out: /' "$work/out" >&2
    sed 's/^/  err: /' "$work/err" >&2
  fi
}

finish() {
  echo "$passes passed, $failures failed"
  [ "$failures" -eq 0 ]
}
