# `fdl-mirror run` refuses a configuration with problems before it starts anything: a table of
# broken files, each giving its problem as file:line:col (or file: for the whole file) on
# stderr and exit 78 (EX_CONFIG, which the unit's RestartPreventExitStatus= keeps systemd from
# restarting), with no listener bound, no state_dir made and no mirror written. Usage errors
# exit 2. (check_config_test.sh has the same table for check-config.)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

"$FDL_PUBLISHER" sample "$work/origin"
n=0

# refused NAME [TEXT...]: the configuration on stdin, with every `STATE` in it replaced by its
# own state_dir, refused by `run` with exit 78 and every TEXT in the output (`FILE` in a TEXT
# stands for the file's path).
refused() {
  local name=$1 file text
  shift
  n=$((n + 1))
  file=$work/case-$n.yaml
  sed "s|STATE|$work/state-$n|g" >"$file"
  # A daemon that starts anyway is stopped by timeout (exit 124), and fails the case.
  expect_status 78 "$name: exit 78" -- timeout 20 "$FDL_MIRROR" run --config "$file"
  for text in "$@"; do expect_output "${text//FILE/$file}" "$name"; done
  if grep -q 'listening on' "$work/out" "$work/err"; then fail "$name: the daemon started listening"; else pass; fi
  [ ! -e "$work/state-$n" ] && pass || fail "$name: state_dir made for a configuration refused"
  [ ! -e "$work/mirror" ] && pass || fail "$name: the mirror was written"
}

refused "an interval that is not a duration" "FILE:5:34: " "interval 'soon'" <<YAML
listen: 127.0.0.1:0
state_dir: STATE
repositories:
  - { name: population, origin: $work/origin, mirror: $work/mirror,
      signatures: off, interval: soon }
YAML

refused "a misspelt key, with the closest one named" "FILE:3:13: " "unknown key 'intervall'" "did you mean 'interval'?" <<YAML
listen: 127.0.0.1:0
state_dir: STATE
defaults: { intervall: 1s, signatures: off }
repositories:
  - name: population
    origin: $work/origin
    mirror: $work/mirror
YAML

refused "signatures required (the default) without allowed_signers" "FILE:4:5: " "repository 'population'" \
  "needs allowed_signers" <<YAML
listen: 127.0.0.1:0
state_dir: STATE
repositories:
  - name: population
    origin: $work/origin
    mirror: $work/mirror
YAML

refused "plain http without a stores entry allowing it" "FILE:6:13: " "allow_plain_http" <<YAML
listen: 127.0.0.1:0
state_dir: STATE
defaults: { signatures: off }
repositories:
  - name: population
    origin: http://127.0.0.1:9/lake/
    mirror: $work/mirror
YAML

refused "two repositories with one name, each problem reported" "FILE:9:11: " "is used twice (first at line 5)" \
  "FILE:10:13: " "lies inside the mirror of repository 'population'" <<YAML
listen: 127.0.0.1:0
state_dir: STATE
defaults: { signatures: off }
repositories:
  - name: population
    origin: $work/origin
    mirror: $work/mirror
  - origin: $work/origin
    name: population
    mirror: $work/mirror/inside
YAML

refused "a listen port out of range" "FILE:1:9: " "127.0.0.1:99999" <<YAML
listen: 127.0.0.1:99999
state_dir: STATE
defaults: { signatures: off }
repositories:
  - { name: population, origin: $work/origin, mirror: $work/mirror }
YAML

refused "a YAML syntax error, reported alone at its place" "FILE:4:" <<YAML
listen: 127.0.0.1:0
state_dir: STATE
defaults: { signatures: off
repositories:
  - { name: population, origin: $work/origin, mirror: $work/mirror }
YAML

# A secret in the file is refused, and its value never shown.
refused "a secret in the file" "FILE:8:5: " "credentials_file" <<YAML
listen: 127.0.0.1:0
state_dir: STATE
defaults: { signatures: off }
repositories:
  - { name: population, origin: $work/origin, mirror: s3://bucket/lake/ }
stores:
  - match: s3://bucket/
    secret_access_key: wJalrXUtnFEMI-K7MDENG-SECRET-VALUE
YAML
if grep -q 'SECRET-VALUE' "$work/out" "$work/err"; then fail "a secret's value appears in the output"; else pass; fi

# Valid YAML naming files that are not there: refused at start as check-config refuses them.
refused "an allowed_signers file that does not exist" "repository 'population': allowed_signers:" \
  "$work/absent.allowed_signers: does not exist" <<YAML
listen: 127.0.0.1:0
state_dir: STATE
repositories:
  - name: population
    origin: $work/origin
    mirror: $work/mirror
    allowed_signers: $work/absent.allowed_signers
YAML

refused "an empty file" "FILE: " </dev/null
expect_status 78 "a configuration file that does not exist" -- timeout 20 "$FDL_MIRROR" run --config "$work/absent.yaml"
expect_output "$work/absent.yaml" "the missing file is named"

# Usage errors: exit 2, as for every command.
expect_status 2 "run without --config" -- timeout 20 "$FDL_MIRROR" run
expect_output "--config" "run without --config names the option"
expect_status 2 "run with an unknown option" -- timeout 20 "$FDL_MIRROR" run --config "$work/case-1.yaml" --frobnicate

finish
