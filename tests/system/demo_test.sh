# The README's demo: mirrors examples/sample-repo and audits the copy.
source "$(dirname "$0")/lib.sh"
expect_status 0 "scripts/demo" -- env TMPDIR="$work" FDL_MIRROR="$FDL_MIRROR" "$SOURCE_DIR/scripts/demo"
expect_output "published 4 version(s)" "demo summary"
expect_output "4 version(s) audited, 0 failed" "demo audit"
finish
