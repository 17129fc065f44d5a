# check-config: the daemon's configuration checked without starting it: exit 0 and a
# summary when valid, 78 (EX_CONFIG) with every YAML problem as file:line:col when not, and the
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
# The default configuration's figure is the one the shipped unit's MemoryMax= allows.
unit_max=$(sed -n 's/^MemoryMax=\([0-9]*\)M$/\1/p' "$SOURCE_DIR/systemd/fdl-mirror.service.in")
expect_output "memory: at most $unit_max MiB with the catalog readers (MemoryMax=${unit_max}M)" \
  "check-config prints what MemoryMax= must allow, the unit's figure for the defaults"

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

# The files an S3 store entry names are parsed, as the store would read them: an empty or
# malformed credentials file and a CA bundle that holds no certificate are problems.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=test-ca -days 2 \
  -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
: >"$work/empty-credentials"
printf 'access_key_id AKIAEXAMPLE\n' >"$work/malformed-credentials"
printf 'access_key_id = AKIAEXAMPLE\nsecret_access_key = not-shown-anywhere\n' >"$work/credentials"
echo "not a certificate" >"$work/garbage.pem"
store_config() { # store_config NAME CREDENTIALS CA_BUNDLE
  cat >"$work/$1.yaml" <<YAML
listen: 127.0.0.1:9464
state_dir: $work/state
repositories:
  - { name: population, origin: $work/origin, mirror: s3://internal-mirror/population/, signatures: off }
stores:
  - { match: s3://internal-mirror/, endpoint: https://s3.internal.example, credentials_file: $2, ca_bundle: $3 }
YAML
}
store_config s3-good "$work/credentials" "$work/ca.pem"
expect_status 0 "an S3 store whose credentials and CA bundle parse" -- "$FDL_MIRROR" check-config --config "$work/s3-good.yaml"
grep -q not-shown-anywhere "$work/out" "$work/err" && fail "check-config printed the secret" || pass
store_config s3-empty "$work/empty-credentials" "$work/ca.pem"
expect_status 78 "an empty credentials_file" -- "$FDL_MIRROR" check-config --config "$work/s3-empty.yaml"
expect_output "store 's3://internal-mirror/': credentials_file: file $work/empty-credentials [default]: no access_key_id line" \
  "the empty credentials file named, with what it lacks"
store_config s3-malformed "$work/malformed-credentials" "$work/ca.pem"
expect_status 78 "a malformed credentials_file" -- "$FDL_MIRROR" check-config --config "$work/s3-malformed.yaml"
expect_output "credentials_file: $work/malformed-credentials:1: not a [section], 'key = value'" "the malformed line named"
store_config s3-garbage-ca "$work/credentials" "$work/garbage.pem"
expect_status 78 "a CA bundle without a certificate" -- "$FDL_MIRROR" check-config --config "$work/s3-garbage-ca.yaml"
expect_output "store 's3://internal-mirror/': ca_bundle: $work/garbage.pem: cannot be loaded as PEM certificates" \
  "the garbage CA bundle named"

# The install sequence of docs/operations.md, as written: the example copied, its key file
# and CA bundle edited to this machine's, its credentials_file left at systemd's
# /run/credentials/fdl-mirror.service/s3, which exists only while the service runs: a note,
# not a problem, so the sequence's check step passes before the first start.
[ ! -e /run/credentials/fdl-mirror.service ] || fail "this machine runs an fdl-mirror service: the case below cannot be seen"
sed -e "s|/etc/fdl-mirror/keys/population.allowed_signers|$work/population.allowed_signers|" \
  -e "s|/etc/ssl/internal-ca.pem|$work/ca.pem|" -e "s|/var/lib/fdl-mirror|$work/state|" \
  "$SOURCE_DIR/systemd/config.example.yaml" >"$work/example.yaml"
expect_status 0 "the example, edited as the install guide says, before the service's first start" -- \
  "$FDL_MIRROR" check-config --config "$work/example.yaml"
expect_output "warning: store 's3://internal-mirror/': credentials_file: /run/credentials/fdl-mirror.service/s3: does not exist now; systemd makes it when the service starts" \
  "the credential systemd makes at start noted"
# The daemon itself (which runs when the service has started) refuses it when it is missing.
expect_status 78 "the daemon with a missing systemd credential" -- \
  timeout 10 "$FDL_MIRROR" run --config "$work/example.yaml"
expect_output "credentials_file: /run/credentials/fdl-mirror.service/s3: does not exist" "the daemon names the missing file"

# The same under the folder that holds $CREDENTIALS_DIRECTORY (systemd's credentials root on
# another layout): a note while the service's folder is absent, a problem once it exists.
mkdir -p "$work/credentials-root/check.service"
sed "s|/run/credentials/fdl-mirror.service/s3|$work/credentials-root/fdl-mirror.service/s3|" "$work/example.yaml" \
  >"$work/example-elsewhere.yaml"
expect_status 0 "a credential under \$CREDENTIALS_DIRECTORY's root, its service's folder absent" -- \
  env CREDENTIALS_DIRECTORY="$work/credentials-root/check.service" "$FDL_MIRROR" check-config --config "$work/example-elsewhere.yaml"
expect_output "credentials_file: $work/credentials-root/fdl-mirror.service/s3: does not exist now; systemd makes it" \
  "the credential under \$CREDENTIALS_DIRECTORY's root noted"
mkdir -p "$work/credentials-root/fdl-mirror.service"
expect_status 78 "the service's credentials folder exists, the file does not" -- \
  env CREDENTIALS_DIRECTORY="$work/credentials-root/check.service" "$FDL_MIRROR" check-config --config "$work/example-elsewhere.yaml"
expect_output "credentials_file: $work/credentials-root/fdl-mirror.service/s3" "the missing credential named"
rm -r "$work/credentials-root/fdl-mirror.service"
expect_status 78 "outside any credentials root, a missing credentials_file is a problem" -- \
  env -u CREDENTIALS_DIRECTORY "$FDL_MIRROR" check-config --config "$work/example-elsewhere.yaml"

expect_status 78 "a missing file" -- "$FDL_MIRROR" check-config --config "$work/absent.yaml"
expect_output "absent.yaml" "check-config says absent.yaml"
expect_status 2 "check-config without --config" -- "$FDL_MIRROR" check-config
expect_output "check-config needs --config FILE" "check-config says check-config needs --config FILE"

finish
