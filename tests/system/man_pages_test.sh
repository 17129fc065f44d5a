# The manual pages (issue 17): fdl-mirror(1) and fdl-mirror.yaml(5) are made at build time
# from docs/cli.md and docs/configuration.md (one source), render without a macro warning,
# cover every command and every top-level key, and are installed with the completions.
: "${FDL_PUBLISHER:=unused}"   # lib.sh asks for it; nothing is published here
source "$(dirname "$0")/lib.sh"
: "${SOURCE_DIR:?set by ctest}"
build=$(dirname "$FDL_MIRROR")

for page in fdl-mirror.1:cli.md fdl-mirror.yaml.5:configuration.md; do
  file=$build/docs/${page%%:*} source=$SOURCE_DIR/docs/${page#*:}
  [ -s "$file" ] && pass || fail "$file was not built"
  name=${page%%:*}
  # Made from the document: its second heading is a section of the page.
  heading=$(grep -m2 '^## ' "$source" | tail -1 | sed 's/^## //; s/`//g' | tr '[:lower:]' '[:upper:]')
  grep -qF "$heading" <(LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$file" 2>/dev/null) && pass ||
    fail "$file has no section '$heading' from $source"
  # Macro warnings only: tbl's "table wider than line width" is about a narrow terminal.
  warnings=$(LC_ALL=C.UTF-8 groff -k -t -man -Wall -wmac -Tutf8 -z "$file" 2>&1 | grep -v -e 'table wider than line width' -e "^warning: file '.*', around line" || true)
  [ -z "$warnings" ] && pass || fail "$file: groff warns: $warnings"
  LC_ALL=C.UTF-8 MANWIDTH=100 man -l "$file" >"$work/${name}.txt" 2>"$work/man.err" && pass ||
    fail "man -l $file failed: $(cat "$work/man.err")"
done

# fdl-mirror(1): every command of --help, its exit statuses, an option of each command.
for command in $("$FDL_MIRROR" --help | sed -n 's/^  fdl-mirror \([a-z][a-z-]*\) .*/\1/p' | sort -u); do
  grep -q "fdl-mirror $command" "$work/fdl-mirror.1.txt" && pass || fail "fdl-mirror(1) does not show the command $command"
done
for text in "EXIT STATUS" "--allow-rewind" "--without-key" "--verify-time" "KINDS OF PROBLEMS"; do
  grep -qF -- "$text" "$work/fdl-mirror.1.txt" && pass || fail "fdl-mirror(1) lacks '$text'"
done
# The daemon's commands have sections of their own, as sync and verify have: options,
# signals and exit statuses, each a row of a table (a cell at the start of a row: "│69  │").
# section COMMAND: the text of the subsection whose title is "fdl-mirror COMMAND …", up to
# the next subsection or section title.
section() {
  awk -v title="   fdl-mirror $1 " 'index($0, title) == 1 { on = 1; next } on && /^(   )?[^ ]/ { exit } on' \
    "$work/fdl-mirror.1.txt"
}
# expect_rows COMMAND CELL...: each CELL starts a row of a table in COMMAND's section.
expect_rows() {
  local command=$1 body cell
  shift
  body=$(section "$command")
  [ -n "$body" ] && pass || fail "fdl-mirror(1) has no section 'fdl-mirror $command'"
  for cell in "$@"; do
    grep -qE -- "^ *(│|\|) ?$cell +(│|\|)" <<<"$body" && pass ||
      fail "fdl-mirror(1), section 'fdl-mirror $command': no table row for '$cell'"
  done
}
expect_rows run "--config FILE" "--help, -h" SIGHUP "SIGTERM, SIGINT" SIGPIPE 0 2 69 70 73 78
expect_rows check-config "--config FILE" "--help, -h" 0 2 70 78
expect_rows status "--config FILE" --json "--repository NAME" "--help, -h" 0 1 2 70 78
expect_rows trigger "--config FILE" --json "--repository NAME" "--help, -h" 0 1 2 69 70 78
expect_rows pause "--config FILE" "--repository NAME" "--reason TEXT" "--help, -h" 0 2 3 70 78
# And every exit status that `COMMAND --help` gives (": 0 after a stop; 78 …").
for command in run check-config status trigger; do
  statuses=$("$FDL_MIRROR" "$command" --help | tr '\n' ' ' | sed -n 's/.*exit status:\(.*\)/\1/p' |
    grep -oE '(^|[:;]) [0-9]+ ' | tr -dc '0-9\n' || true)
  [ -n "$statuses" ] && pass || fail "$command --help gives no exit status"
  # shellcheck disable=SC2086 # one argument per status
  expect_rows "$command" $statuses
done
# fdl-mirror.yaml(5): every top-level key of the example configuration.
for key in $(sed -n 's/^\([a-z_]*\):.*/\1/p' "$SOURCE_DIR/systemd/config.example.yaml"); do
  grep -qE "(^| )$key( |:|$)" "$work/fdl-mirror.yaml.5.txt" && pass || fail "fdl-mirror.yaml(5) does not describe '$key'"
done
grep -q "NAME" "$work/fdl-mirror.yaml.5.txt" && grep -q "fdl-mirror.yaml - configuration of the fdl-mirror daemon" \
  "$work/fdl-mirror.yaml.5.txt" && pass || fail "fdl-mirror.yaml(5) has no NAME line"

# Installed where man and the shells look.
expect_status 0 "cmake --install into a temporary prefix" -- cmake --install "$build" --prefix "$work/prefix"
for installed in share/man/man1/fdl-mirror.1 share/man/man5/fdl-mirror.yaml.5 \
  share/bash-completion/completions/fdl-mirror share/zsh/vendor-completions/_fdl-mirror; do
  [ -s "$work/prefix/$installed" ] && pass || fail "cmake --install: $installed missing"
done
MANPATH=$work/prefix/share/man man -w fdl-mirror.yaml >/dev/null 2>&1 && pass || fail "man does not find fdl-mirror.yaml(5) once installed"
finish
