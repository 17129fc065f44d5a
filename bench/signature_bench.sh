#!/usr/bin/env bash
# Signature benchmark (issue 14): the time to decide one version.json.sig in process, as
# sync and verify decide it (fdl-bench-sshsig), beside spawning `ssh-keygen -Y verify` for
# the same signature (what a script or a mirror built on OpenSSH's tool pays per version),
# and spawning `fdl-mirror check-signature` (process start included), for Ed25519, ECDSA
# P-256, RSA 3072 and both security-key types. Keys are made fresh; the security keys
# sign in software (fdl-test-sshsig), which ssh-keygen verifies like any other.
#
#   bench/signature_bench.sh [SPAWNS]     (default 200 spawns per tool and key; needs a build)
set -euo pipefail
cd "$(dirname "$0")/.."
spawns=${1:-200}
build=${FDL_MIRROR_BUILD_DIR:-build}
bench=$(realpath "$build/fdl-bench-sshsig")
mirror=$(realpath "$build/fdl-mirror")
forge=$(realpath "$build/fdl-test-sshsig")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# A version.json of the usual size, as the signed message.
printf '{"fdl":"0.1","id":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c","parents":["019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6b"],"created_at":"2026-12-01T00:00:00Z","catalog":{"path":"catalog.duckdb","sha256":"%064d","size":1048576},"dataset":{"sha256":"%064d","size":512},"files":{"sha256":"%064d","size":40960}}\n' 0 0 0 >msg

for k in ed25519 ecdsa256 rsa3072; do
  case $k in
    ed25519) ssh-keygen -q -t ed25519 -N "" -f "key-$k" ;;
    ecdsa256) ssh-keygen -q -t ecdsa -b 256 -N "" -f "key-$k" ;;
    rsa3072) ssh-keygen -q -t rsa -b 3072 -N "" -f "key-$k" ;;
  esac
  ssh-keygen -Y sign -q -f "key-$k" -n fdl <msg >"sig-$k"
  echo "alice@example.org $(cut -d' ' -f1,2 "key-$k.pub")" >"allowed-$k"
done
for k in sk-ed25519 sk-ecdsa; do
  "$forge" "$k" msg fdl "sig-$k" "$k.pub"
  echo "alice@example.org $(cat "$k.pub")" >"allowed-$k"
done

# ms_per_spawn COMMAND...: the mean wall time of one run over $spawns runs, in ms.
ms_per_spawn() {
  local start end
  start=$(date +%s.%N)
  for _ in $(seq "$spawns"); do "$@" <msg >/dev/null 2>&1 || { echo "refused: $*" >&2; exit 1; }; done
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" -v n="$spawns" 'BEGIN { print (e - s) * 1000 / n }'
}

printf '%-12s %14s %16s %18s %10s\n' key "in-process µs" "ssh-keygen ms" "check-signature ms" ratio
for k in ed25519 ecdsa256 rsa3072 sk-ed25519 sk-ecdsa; do
  read -r iterations us < <("$bench" "allowed-$k" fdl "sig-$k" msg 2)
  keygen=$(ms_per_spawn ssh-keygen -Y verify -f "allowed-$k" -I alice@example.org -n fdl -s "sig-$k")
  ours=$(ms_per_spawn "$mirror" check-signature -f "allowed-$k" -I alice@example.org -n fdl -s "sig-$k")
  # ratio: ssh-keygen's time per signature over the in-process time (how many times faster).
  printf '%-12s %14.1f %16.2f %18.2f %9.0fx\n' "$k" "$us" "$keygen" "$ours" "$(awk -v k="$keygen" -v u="$us" 'BEGIN { print k * 1000 / u }')"
done
echo "(in process: every decision repeated for 2 s per key, $iterations for the last; spawns: $spawns per tool and key)"
