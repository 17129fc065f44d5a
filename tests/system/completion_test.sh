# Shell completion (issue 17): bash's offers, for each command, exactly the options that
# `fdl-mirror COMMAND --help` lists, and the values it knows (policies, repository names of
# the --config file); zsh's file parses and names the same options.
: "${FDL_PUBLISHER:=unused}"   # lib.sh asks for it; nothing is published here
source "$(dirname "$0")/lib.sh"
: "${SOURCE_DIR:?set by ctest}"
bash_completion=$SOURCE_DIR/docs/completion/fdl-mirror.bash
zsh_completion=$SOURCE_DIR/docs/completion/_fdl-mirror

commands=$("$FDL_MIRROR" --help | sed -n 's/^  fdl-mirror \([a-z][a-z-]*\) .*/\1/p' | sort -u)
[ "$(echo "$commands" | wc -l)" -ge 7 ] && pass || fail "--help lists too few commands: $commands"

# help_options COMMAND: the options `COMMAND --help` lists, and --help itself.
help_options() {
  { "$FDL_MIRROR" "$1" --help | grep -oE '(^|[ [])--?[a-zA-Z]([a-zA-Z.-]*[a-zA-Z])?' | tr -d ' [' ; echo --help; } | sort -u
}
# bash_offers WORD...: what bash's completion offers after `fdl-mirror WORD...`.
bash_offers() {
  bash -c 'source "$1"; shift; COMP_WORDS=(fdl-mirror "$@"); COMP_CWORD=$(($# )); _fdl_mirror
    printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_completion" "$@" | sort -u
}

for command in $commands; do
  want=$(help_options "$command")
  got=$(bash_offers "$command" -)
  if [ "$want" = "$got" ]; then pass; else
    fail "bash completion of '$command -': $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ') (< --help only, > completion only)"
  fi
  # Each option appears in zsh's file too.
  for option in $want; do
    grep -qE -- "'\\*?$option(\\[|')" "$zsh_completion" && pass || fail "zsh completion lacks $command $option"
  done
done

first=$(bash_offers "")
for command in $commands help --help --version; do
  grep -qx -- "$command" <<<"$first" && pass || fail "bash completion does not offer the command $command"
done
[ "$(bash_offers sync --signatures "")" = "$(printf 'if-present\noff\nrequired')" ] && pass ||
  fail "--signatures values: $(bash_offers sync --signatures "" | tr '\n' ' ')"
cat >"$work/mirror.yaml" <<'YAML'
repositories:
  - name: population
    origin: /srv/a
  - { name: weather, origin: /srv/b, mirror: /srv/c }
YAML
[ "$(bash_offers status --config "$work/mirror.yaml" --repository "")" = "$(printf 'population\nweather')" ] && pass ||
  fail "--repository names: $(bash_offers status --config "$work/mirror.yaml" --repository "" | tr '\n' ' ')"
[ "$(bash_offers help s)" = "$(printf 'status\nsync')" ] && pass || fail "help COMMAND: $(bash_offers help s | tr '\n' ' ')"

if command -v zsh >/dev/null; then
  expect_status 0 "zsh parses its completion" -- zsh -n "$zsh_completion"
else
  fail "zsh is not installed: run scripts/setup"
fi
finish
