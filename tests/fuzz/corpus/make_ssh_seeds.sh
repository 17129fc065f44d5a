#!/usr/bin/env bash
# Writes the seeds of the SSH targets (corpus/ssh_wire, ssh_key, ssh_cert, sshsig,
# allowed_signers) with ssh-keygen: real keys of every type this build verifies,
# certificates from three CAs, and signatures over the message sshsig_fuzz.cpp verifies.
# Run from anywhere; it replaces the files it writes. Keys are new each run, so the seeds
# change bytes but not kind (the committed ones were made by this script once).
set -euo pipefail
corpus=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
printf 'fdl fuzz message\n' >msg   # the message of sshsig_fuzz.cpp

for spec in "ed25519:-t ed25519" "p256:-t ecdsa -b 256" "p384:-t ecdsa -b 384" "p521:-t ecdsa -b 521" "rsa:-t rsa -b 2048"; do
  ssh-keygen -q ${spec#*:} -N '' -C "${spec%%:*}@example.org" -f "${spec%%:*}" </dev/null
done
for ca in "ca_ed25519:-t ed25519" "ca_rsa:-t rsa -b 2048" "ca_p256:-t ecdsa -b 256"; do
  ssh-keygen -q ${ca#*:} -N '' -C ca -f "${ca%%:*}" </dev/null
done
# A user certificate of each CA type, one with a critical option, one for a host.
ssh-keygen -q -s ca_ed25519 -I alice-cert -n alice@example.org,carol -V 20250101:20300101 ed25519.pub
ssh-keygen -q -s ca_rsa -I bob-cert -n bob -V 20250101:20300101 rsa.pub
ssh-keygen -q -s ca_p256 -I p384-cert -n alice@example.org -V 20250101:20300101 -O critical:force-command=ls p384.pub
ssh-keygen -q -s ca_ed25519 -h -I host-cert -n host.example.org -V 20250101:20300101 p256.pub

for k in ed25519 p256 p384 p521 rsa; do
  ssh-keygen -Y sign -q -n fdl -f "$k" msg && mv msg.sig "$k.sig"
done
ssh-keygen -Y sign -q -n fdl -O hashalg=sha256 -f rsa msg && mv msg.sig rsa-sha256.sig
ssh-keygen -Y sign -q -n file -f ed25519 msg && mv msg.sig ed25519-file.sig
ssh-keygen -Y sign -q -n fdl -f ed25519-cert.pub <msg >cert-ed25519.sig
ssh-keygen -Y sign -q -n fdl -f rsa-cert.pub <msg >cert-rsa.sig

mkdir -p "$corpus"/{ssh_wire,ssh_key,ssh_cert,sshsig,allowed_signers}
python3 - "$corpus" <<'PY'
import base64, glob, sys
corpus = sys.argv[1]
def b64(path):
    return open(path).read().split()[1]
def write(target, name, data):
    with open(f"{corpus}/{target}/{name}", "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
for k in ["ed25519", "p256", "p384", "p521", "rsa"]:
    write("ssh_key", f"{k}.blob", base64.b64decode(b64(f"{k}.pub")))
    write("ssh_key", f"{k}.txt", " ".join(open(f"{k}.pub").read().split()[:2]))
for c in ["ed25519", "rsa", "p384", "p256"]:
    write("ssh_cert", f"{c}-cert.blob", base64.b64decode(b64(f"{c}-cert.pub")))
write("ssh_key", "ed25519-cert.blob", base64.b64decode(b64("ed25519-cert.pub")))
write("ssh_wire", "ed25519.b64", b64("ed25519.pub"))
write("ssh_wire", "rsa.b64", b64("rsa.pub") + "\n")
write("ssh_wire", "p256.blob", base64.b64decode(b64("p256.pub")))
for sig in sorted(glob.glob("*.sig")):
    text = open(sig).read()
    write("sshsig", sig, text)
    if sig in ("ed25519.sig", "cert-ed25519.sig", "p256.sig"):
        lines = text.splitlines()
        write("sshsig", sig.replace(".sig", ".blob"), base64.b64decode("".join(lines[1:-1])))
line = lambda k: " ".join(open(f"{k}.pub").read().split()[:2])
write("allowed_signers", "plain", f"alice@example.org {line('ed25519')}\nbob {line('rsa')} a comment\n")
write("allowed_signers", "options",
      "# trusted keys\n\n"
      f"alice@example.org,carol namespaces=\"fdl,file\",valid-after=\"20250101\",valid-before=\"20300101Z\" {line('p256')}\n"
      f"\"*@example.org\" cert-authority,namespaces=\"fdl\" {line('ca_ed25519')}\n"
      f"!mallory,* valid-after=\"202501011200\" {line('p521')}\n")
write("allowed_signers", "cert-authority", f"* cert-authority {line('ca_rsa')}\nalice@example.org CERT-AUTHORITY {line('ca_p256')}\n")
write("allowed_signers", "announced", f"release@example.org {line('p384')}\n{line('rsa')}\n")
PY
echo "seeds written under $corpus"
