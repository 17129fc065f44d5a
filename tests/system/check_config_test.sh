# check-config: the daemon's configuration checked without starting it: exit 0 and a
# summary when valid, 78 (EX_CONFIG) with every problem as file:line:col when not, and the
# files it names (allowed_signers, credentials, CA bundles) read and checked too.
: "${FDL_PUBLISHER:=unused}"   # lib.sh asks for it; these checks publish nothing
source "$(dirname "$0")/lib.sh"
: "${SOURCE_DIR:?set by ctest}"

ssh-keygen -q -t ed25519 -N '' -C ops -f "$work/key"
echo "ops@example.org namespaces=\"fdl\" $(cut -d' ' -f1,2 "$work/key.pub")" >"$work/population.allowed_signers"
mkdir -p "$work/origin"
cat >"$work/good.yaml" <<YAML
listen: 127.0.0.1:9464
state_dir: $work/state
repositories:
  - name: population
    origin: $work/origin
    mirror: $work/mirror
    allowed_signers: population.allowed_signers
YAML
expect_status 0 "a valid configuration" -- "$FDL_MIRROR" check-config --config "$work/good.yaml"
expect_output "valid; 1 repository (population); listening on 127.0.0.1:9464" "check-config says valid; 1 repository (population); listen"

# Every YAML problem at once, each as file:line:col, and exit 78.
cat >"$work/broken.yaml" <<'YAML'
listen: 127.0.0.1:99999
defaults: { intervall: 5m }
repositories:
  - name: population
    origin: https://data.example.org/lake/
    mirror: http://mirror.example.org/lake/
    signatures: off
    interval: soon
YAML
expect_status 78 "a broken configuration" -- "$FDL_MIRROR" check-config --config "$work/broken.yaml"
expect_output "$work/broken.yaml:1:9: " "check-config says \$work/broken.yaml:1:9: "
expect_output "$work/broken.yaml:2:13: " "check-config says \$work/broken.yaml:2:13: "
expect_output "intervall" "check-config says intervall"
expect_output "$work/broken.yaml:6:13: " "check-config says \$work/broken.yaml:6:13: "
expect_output "$work/broken.yaml:8:15: " "check-config says \$work/broken.yaml:8:15: "
expect_output "4 problems" "check-config says 4 problems"

# An allowed_signers file with a line that does not parse: skipped as OpenSSH skips it,
# so the file is valid, and check-config warns, naming the file, the line and the reason.
{ echo "not an allowed_signers line"; cat "$work/population.allowed_signers"; } >"$work/bad.allowed_signers"
sed "s|population.allowed_signers|bad.allowed_signers|" "$work/good.yaml" >"$work/bad-signers.yaml"
expect_status 0 "an allowed_signers file with a line that does not parse" -- "$FDL_MIRROR" check-config --config "$work/bad-signers.yaml"
expect_output "warning: repository 'population': $work/bad.allowed_signers:1: " "check-config names the line"
expect_output "(this line of allowed_signers is skipped: it grants nothing)" "check-config says the line is skipped"

# The shipped example is valid YAML; only the files it names are missing on this machine.
expect_status 78 "the example names files this machine lacks" -- \
  "$FDL_MIRROR" check-config --config "$SOURCE_DIR/systemd/config.example.yaml"
expect_output "allowed_signers: /etc/fdl-mirror/keys/population.allowed_signers: does not exist" "check-config says allowed_signers: /etc/fdl-mirror/keys/po"
if grep -E ':[0-9]+:[0-9]+: ' "$work/err" >/dev/null; then
  fail "the example has YAML problems: $(grep -E ':[0-9]+:[0-9]+: ' "$work/err")"
else pass; fi

expect_status 78 "a missing file" -- "$FDL_MIRROR" check-config --config "$work/absent.yaml"
expect_output "absent.yaml" "check-config says absent.yaml"
expect_status 2 "check-config without --config" -- "$FDL_MIRROR" check-config
expect_output "check-config needs --config FILE" "check-config says check-config needs --config FILE"

finish
