# bash completion for fdl-mirror, installed as share/bash-completion/completions/fdl-mirror.
# The options are those of `fdl-mirror COMMAND --help` (tests/system/completion_test.sh
# checks that they stay the same).

_fdl_mirror_shared='--json --allowed-signers --signatures --namespace --ca-bundle --allow-plain-http
  --max-requests-per-second --max-bytes-per-second --allow-redirect-to --help'

_fdl_mirror_options() {
  case $1 in
    sync) echo "--allow-rewind --concurrency --quick --max-refs --max-ref-name-length --memory-limit --deadline --ref --exclude-ref --head --depth $_fdl_mirror_shared" ;;
    verify) echo "--concurrency --memory-limit --deadline --version --without-key --full-digests --config --repository --origin --attestation-signers --max-age --attestation-only --attestation-namespace $_fdl_mirror_shared" ;;
    check-signature) echo "-f -I -n -s --verify-time --help" ;;
    find-principals) echo "-f -s -n --verify-time --help" ;;
    run) echo "--config --web.config.file --once --dry-run --help" ;;
    check-config) echo "--config --web.config.file --help" ;;
    status | trigger) echo "--config --json --repository --help" ;;
    pause) echo "--config --repository --reason --help" ;;
    compare) echo "--max-lag --attestation-signers --attestation-namespace --concurrency --memory-limit --json --ca-bundle --allow-plain-http --max-requests-per-second --max-bytes-per-second --allow-redirect-to --help" ;;
    resume) echo "--config --repository --help" ;;
  esac
}

# The repository names of the configuration given with --config, for status, trigger and verify --repository.
_fdl_mirror_repositories() {
  local i config=
  for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
    [ "${COMP_WORDS[i]}" = --config ] && config=${COMP_WORDS[i + 1]}
  done
  [ -r "$config" ] || return 0
  sed -n 's/^[[:space:]-]*name:[[:space:]]*\([^,}#[:space:]]*\).*/\1/p; s/.*{[[:space:]]*name:[[:space:]]*\([^,}[:space:]]*\).*/\1/p' "$config" |
    sort -u
}

_fdl_mirror() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local commands='sync verify compare check-signature find-principals run check-config status trigger pause resume help'
  if [ "$COMP_CWORD" -eq 1 ]; then
    mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$cur")
    return
  fi
  local command=${COMP_WORDS[1]}
  case $prev in
    --signatures) mapfile -t COMPREPLY < <(compgen -W 'required if-present off' -- "$cur"); return ;;
    --repository) mapfile -t COMPREPLY < <(compgen -W "$(_fdl_mirror_repositories)" -- "$cur"); return ;; # status, trigger, pause, resume, verify
    --config | --web.config.file | --allowed-signers | --attestation-signers | --ca-bundle | -f | -s)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    --concurrency | --max-refs | --max-ref-name-length | --memory-limit | --deadline | --namespace | --max-requests-per-second | \
      --max-bytes-per-second | --allow-redirect-to | --without-key | --version | --verify-time | --max-age | \
      --attestation-namespace | --max-lag | --ref | --exclude-ref | --head | --depth | -I | -n)
      return ;; # a value of the user's own
  esac
  if [ "$command" = help ]; then
    [ "$COMP_CWORD" -eq 2 ] && mapfile -t COMPREPLY < <(compgen -W "${commands% help}" -- "$cur")
    return
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_fdl_mirror_options "$command")" -- "$cur")
  elif [ "$command" = sync ] || [ "$command" = verify ] || [ "$command" = compare ]; then
    mapfile -t COMPREPLY < <(compgen -d -- "$cur") # folders; URLs are typed
  fi
}
complete -o filenames -F _fdl_mirror fdl-mirror
