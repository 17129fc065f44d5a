# The README's demo: writes a sample repository, mirrors it and audits the copy.
source "$(dirname "$0")/lib.sh"
expect_status 0 "scripts/demo" -- env TMPDIR="$work" FDL_MIRROR="$FDL_MIRROR" FDL_PUBLISHER="$FDL_PUBLISHER" \
    "$SOURCE_DIR/scripts/demo"
expect_output "published 4 version(s)" "demo summary"
expect_output "4 version(s) audited, 0 failed" "demo audit"
expect_output "catalog: DuckLake 1.0, snapshot 4, 1 table(s), 2 data file(s)" "the audit reads each catalog"
finish
