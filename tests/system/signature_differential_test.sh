# Differential test: fdl-mirror check-signature against ssh-keygen -Y verify (OpenSSH) on
# generated cases. Each case must get the same verdict from both (accept = exit 0). The
# cases where this build is knowingly stricter than OpenSSH (docs/mirroring-rules.md: a
# certificate with a critical option, DSA, a security key signing without touch…) only
# require that fdl-mirror rejects; they are listed apart.
source "$(dirname "$0")/lib.sh"
: "${FDL_SSHSIG:?set by ctest}"
export TZ=UTC # allowed_signers times without Z are local time, for both tools
cd "$work"

same=0
stricter=0

# verdict TOOL ARGS...: prints accept or reject
keygen_verdict() { # ALLOWED PRINCIPAL NS SIG MSG [TIME]
  local extra=()
  [ -n "${6:-}" ] && extra=(-Overify-time="$6")
  if ssh-keygen -Y verify -f "$1" -I "$2" -n "$3" -s "$4" "${extra[@]}" <"$5" >/dev/null 2>&1; then echo accept; else echo reject; fi
}
mirror_verdict() {
  local extra=()
  [ -n "${6:-}" ] && extra=(--verify-time "$6")
  if "$FDL_MIRROR" check-signature -f "$1" -I "$2" -n "$3" -s "$4" "${extra[@]}" <"$5" >/dev/null 2>"$work/why"; then echo accept; else echo reject; fi
}

# case NAME EXPECT ALLOWED PRINCIPAL NS SIG MSG [TIME]: both tools agree, and on EXPECT.
case_() {
  local name=$1 expect=$2
  shift 2
  local k m
  k=$(keygen_verdict "$@")
  m=$(mirror_verdict "$@")
  if [ "$k" = "$m" ] && [ "$k" = "$expect" ]; then
    same=$((same + 1)); pass
  else
    fail "$name: ssh-keygen $k, fdl-mirror $m, expected $expect ($(head -c 200 "$work/why"))"
  fi
}

# stricter NAME ALLOWED PRINCIPAL NS SIG MSG: fdl-mirror must reject; OpenSSH's verdict is shown.
stricter_() {
  local name=$1
  shift
  local k m
  k=$(keygen_verdict "$@")
  m=$(mirror_verdict "$@")
  echo "stricter case '$name': ssh-keygen $k, fdl-mirror $m ($(head -c 120 "$work/why"))"
  if [ "$m" = reject ]; then stricter=$((stricter + 1)); pass; else fail "$name: fdl-mirror accepted"; fi
}

printf '{"fdl":"0.1","id":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"}\n' >msg
printf '{"fdl":"0.1","id":"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6d"}\n' >tampered

# Keys of every type ssh-keygen makes here, and one nobody lists.
for spec in ed25519: ecdsa:256 ecdsa:384 ecdsa:521 rsa:3072; do
  t=${spec%%:*}; b=${spec#*:}
  name=$t${b}
  ssh-keygen -q -t "$t" ${b:+-b "$b"} -N "" -C "$name" -f "key-$name"
done
ssh-keygen -q -t ed25519 -N "" -f key-stranger
keys="ed25519 ecdsa256 ecdsa384 ecdsa521 rsa3072"

sign() { # KEY NS OUT [HASHALG]
  ssh-keygen -Y sign -q -f "key-$1" -n "$2" ${4:+-O hashalg=$4} <msg >"$3"
}
for k in $keys; do
  sign "$k" fdl "sig-$k"
  sign "$k" fdl "sig256-$k" sha256
  sign "$k" other "sigother-$k"
done
sign stranger fdl sig-stranger

line() { echo "$1 $(cut -d' ' -f1,2 "key-$2.pub")"; }
{ for k in $keys; do line alice@example.org "$k"; done; } >all

# 1. Every key type: valid, tampered, wrong namespace, wrong principal, unlisted key.
for k in $keys; do
  case_ "$k valid" accept all alice@example.org fdl "sig-$k" msg
  case_ "$k valid sha256" accept all alice@example.org fdl "sig256-$k" msg
  case_ "$k tampered message" reject all alice@example.org fdl "sig-$k" tampered
  case_ "$k tampered message sha256" reject all alice@example.org fdl "sig256-$k" tampered
  case_ "$k signed for another namespace" reject all alice@example.org fdl "sigother-$k" msg
  case_ "$k verified for another namespace" reject all alice@example.org other "sig-$k" msg
  case_ "$k other namespace, verified as such" accept all alice@example.org other "sigother-$k" msg
  case_ "$k wrong principal" reject all bob@example.org fdl "sig-$k" msg
done
line alice@example.org stranger >only-stranger
for k in $keys; do
  case_ "$k unlisted key" reject only-stranger alice@example.org fdl "sig-$k" msg
done
case_ "stranger's key, not in the file" reject all alice@example.org fdl sig-stranger msg

# Tampered signature: flip one base64 character in the middle.
for k in $keys; do
  awk 'NR==3 { c = substr($0, 10, 1); r = (c == "A") ? "B" : "A"; $0 = substr($0, 1, 9) r substr($0, 11) } { print }' \
    "sig-$k" >"sigbad-$k"
  case_ "$k tampered signature" reject all alice@example.org fdl "sigbad-$k" msg
done

# 2. Principal patterns and negation, on two key types.
for k in ed25519 rsa3072; do
  p() { line "$1" "$k" >"pat"; case_ "$k principals '$1' for $2" "$3" pat "$2" fdl "sig-$k" msg; }
  p '*@example.org' alice@example.org accept
  p '*@example.org' alice@example.com reject
  p 'alice@*,bob@*' bob@example.net accept
  p '*,!mallory@example.org' mallory@example.org reject
  p '*,!mallory@example.org' alice@example.org accept
  p '!mallory@example.org,*' mallory@example.org reject
  p 'al?ce@example.org' allce@example.org accept
  p 'al?ce@example.org' alce@example.org reject
  p '"alice@example.org,bob@example.org"' bob@example.org accept
  p 'ALICE@example.org' alice@example.org reject
  p 'carol@example.org,alice@example.org' alice@example.org accept
done

# 2b. Patterns at OpenSSH's limit (match.c's match_pattern_list): a sub-pattern of 1023 bytes
# or more, '!' not counted, ends the whole list with no match, whatever matched before it.
x1021=$(printf 'x%.0s' $(seq 1021)) x1022=${x1021}x x1023=${x1021}xx
q1022=$(printf '?%.0s' $(seq 1022))
long_pattern() { # PATTERNS PRINCIPAL EXPECT NAME
  line "$1" ed25519 >pat
  case_ "principals $4 for $2" "$3" pat "$2" fdl sig-ed25519 msg
}
long_pattern "alice@example.org,$x1022" alice@example.org accept "'alice@example.org,<1022 x>'"
long_pattern "alice@example.org,$x1023" alice@example.org reject "'alice@example.org,<1023 x>'"
long_pattern "$x1022,alice@example.org" alice@example.org accept "'<1022 x>,alice@example.org'"
long_pattern "$x1023,alice@example.org" alice@example.org reject "'<1023 x>,alice@example.org'"
long_pattern "$x1022" "$x1022" accept "'<1022 x>'"
long_pattern "$x1023" "$x1023" reject "'<1023 x>'"
long_pattern "$x1021,$x1022" "$x1022" accept "'<1021 x>,<1022 x>'"
long_pattern "$q1022" "${x1021}y" accept "'<1022 ?>'"
long_pattern "$q1022?" "${x1022}y" reject "'<1023 ?>'"
long_pattern "*$x1021" "y$x1021" accept "'*<1021 x>'"
long_pattern "*$x1022" "y$x1022" reject "'*<1022 x>'"
long_pattern "!$x1022,alice@example.org" alice@example.org accept "'!<1022 x>,alice@example.org'"
long_pattern "!$x1023,alice@example.org" alice@example.org reject "'!<1023 x>,alice@example.org'"
long_pattern "alice@example.org,!$x1023" alice@example.org reject "'alice@example.org,!<1023 x>'"
long_pattern "*,!$x1022" "$x1022" reject "'*,!<1022 x>'"
long_pattern "*,!$x1022" alice@example.org accept "'*,!<1022 x>'"
long_pattern "*,!$x1023" alice@example.org reject "'*,!<1023 x>'"
for opt in "fdl,$x1022:accept" "fdl,$x1023:reject" "$x1023,fdl:reject" "*,!$x1022:accept" "*,!$x1023:reject" \
  "!$x1022,fdl:accept"; do
  value=${opt%:*} expect=${opt##*:}
  echo "alice@example.org namespaces=\"$value\" $(cut -d' ' -f1,2 key-ed25519.pub)" >ns
  shown=${value//$x1023/<1023 x>}; shown=${shown//$x1022/<1022 x>}
  case_ "namespaces=\"$shown\" for fdl" "$expect" ns alice@example.org fdl sig-ed25519 msg
done

# 3. namespaces= options.
for opt in 'namespaces="fdl"' 'namespaces="f*"' 'namespaces="file,fdl"'; do
  echo "alice@example.org $opt $(cut -d' ' -f1,2 key-ed25519.pub)" >ns
  case_ "$opt allows fdl" accept ns alice@example.org fdl sig-ed25519 msg
done
for opt in 'namespaces="file"' 'namespaces="*,!fdl"' 'NAMESPACES="file"'; do
  echo "alice@example.org $opt $(cut -d' ' -f1,2 key-ed25519.pub)" >ns
  case_ "$opt refuses fdl" reject ns alice@example.org fdl sig-ed25519 msg
done
echo "alice@example.org namespaces=\"fdl\" $(cut -d' ' -f1,2 key-ed25519.pub)" >ns
case_ "namespaces=fdl refuses other" reject ns alice@example.org other sigother-ed25519 msg

# 4. Validity windows, pinned with the verify time.
w() { echo "alice@example.org $1 $(cut -d' ' -f1,2 key-ed25519.pub)" >win; case_ "$1 at $2" "$3" win alice@example.org fdl sig-ed25519 msg "$2"; }
w 'valid-after="20250101"' 20241231 reject
w 'valid-after="20250101"' 20250101 accept
w 'valid-after="20250101"' 20260101 accept
w 'valid-before="20250101"' 20241231 accept
w 'valid-before="20250101"' 20250102 reject
w 'valid-after="20250101",valid-before="20251231"' 20250615 accept
w 'valid-after="20250101",valid-before="20251231"' 20260101 reject
w 'valid-after="20250101Z"' 20250101000000Z accept
w 'valid-after="202501011200"' 20250101115959 reject
w 'valid-after="202501011200"' 20250101120000 accept
w 'valid-before="20250101120000Z"' 20250101120001Z reject
w 'valid-before="20250101120000Z"' 20250101120000Z accept
# Every form OpenSSH 9.2's parse_absolute_time reads, each on both sides of its instant.
for form in '20250101z:20250101000000Z' '20250101UTC:20250101000000Z' '20250101utc:20250101000000Z' \
  '202501011200uTc:20250101120000Z' '20250101120030Z:20250101120030Z' '2025 101Z:20250101000000Z' \
  '2025 1 1Z:20250101000000Z' '20250231Z:20250303000000Z' '20250101235960Z:20250102000000Z' \
  '20250101235961Z:20250102000001Z' '202501011200:20250101120000' '20250101:20250101000000'; do
  value=${form%%:*} instant=${form#*:}
  before=$(date -u -d "@$(( $(TZ=UTC date -d "${instant:0:8} ${instant:8:2}:${instant:10:2}:${instant:12:2}" +%s) - 1 ))" +%Y%m%d%H%M%S)Z
  [ "${instant: -1}" = Z ] || before=${before%Z}
  w "valid-after=\"$value\"" "$instant" accept
  w "valid-after=\"$value\"" "$before" reject
  w "valid-before=\"$value\"" "$instant" accept
done
# What it refuses makes the line bad: skipped by both, so the signature is not accepted.
for value in 20250101ZUTC '20250101 UTC' 2025-01-01 20250132 20251301 20250101240000Z 20250101235962Z 19700101Z; do
  w "valid-after=\"$value\"" 20260101 reject
done
# A local time in summer is read as standard time by OpenSSH (tm_isdst = 0): with the
# zone of New York, 12:00 on 1 July is 17:00Z, not the 16:00Z of the wall clock.
export TZ=EST5EDT,M3.2.0,M11.1.0
w 'valid-after="202507011200"' 20250701165959Z reject
w 'valid-after="202507011200"' 20250701170000Z accept
export TZ=UTC
w 'cert-authority' 20250101 reject

# 5. Malformed allowed_signers lines (the only line).
for bad in 'alice@example.org frobnicate ' 'alice@example.org namespaces=fdl ' 'alice@example.org namespaces="fdl ' \
  'alice@example.org valid-after="2025" ' '"alice@example.org '; do
  echo "$bad$(cut -d' ' -f1,2 key-ed25519.pub)" >bad
  case_ "malformed line: $bad" reject bad alice@example.org fdl sig-ed25519 msg
  # Both skip the line that does not parse and go on: a good line after it still counts.
  { cat bad; line alice@example.org ed25519; } >bad-then-good
  case_ "malformed line, then a good one: $bad" accept bad-then-good alice@example.org fdl sig-ed25519 msg
done
echo "alice@example.org ssh-ed25519 AAAA!!!!" >bad
case_ "malformed key" reject bad alice@example.org fdl sig-ed25519 msg
echo "alice@example.org $(cut -d' ' -f1 key-rsa3072.pub) $(cut -d' ' -f2 key-ed25519.pub)" >bad
case_ "key type text does not match the blob" reject bad alice@example.org fdl sig-ed25519 msg
printf '# a comment\n\n   \n%s\n' "$(line alice@example.org ed25519)" >commented
case_ "comments and blank lines" accept commented alice@example.org fdl sig-ed25519 msg

# 6. Armor.
{ echo; cat sig-ed25519; } >armor; case_ "blank line before BEGIN" reject all alice@example.org fdl armor msg
sed 's/$/\r/' sig-ed25519 >armor; case_ "CRLF line ends" reject all alice@example.org fdl armor msg
{ cat sig-ed25519; echo "trailing words"; } >armor; case_ "text after END" accept all alice@example.org fdl armor msg
head -n -1 sig-ed25519 >armor; case_ "no END line" reject all alice@example.org fdl armor msg
sed '2s/^/  /' sig-ed25519 >armor; case_ "spaces inside the body" accept all alice@example.org fdl armor msg
sed '2s/^./*/' sig-ed25519 >armor; case_ "a non-base64 character" reject all alice@example.org fdl armor msg

# 7. Crafted signatures that ssh-keygen will not make.
forge() { "$FDL_SSHSIG" "$1" msg fdl f.sig f.pub "${@:2}"; echo "alice@example.org $(cat f.pub)" >f.allowed; }
forge ed25519; case_ "forged ed25519, valid" accept f.allowed alice@example.org fdl f.sig msg
forge rsa:2048; case_ "forged rsa-2048 rsa-sha2-512" accept f.allowed alice@example.org fdl f.sig msg
forge rsa:2048 rsa-alg=rsa-sha2-256; case_ "forged rsa-sha2-256" accept f.allowed alice@example.org fdl f.sig msg
forge rsa:2048 rsa-alg=ssh-rsa; case_ "RSA with SHA-1 (ssh-rsa)" reject f.allowed alice@example.org fdl f.sig msg
forge rsa:768; case_ "768-bit RSA key" reject f.allowed alice@example.org fdl f.sig msg
forge ed25519 version=2; case_ "SSHSIG version 2" reject f.allowed alice@example.org fdl f.sig msg
forge ed25519 trailing; case_ "a byte after the signature" reject f.allowed alice@example.org fdl f.sig msg
forge ed25519 hash=sha1; case_ "hash sha1" reject f.allowed alice@example.org fdl f.sig msg
forge ed25519 hash=sha256; case_ "forged sha256" accept f.allowed alice@example.org fdl f.sig msg
forge ed25519 signed-namespace=other; case_ "blob says fdl, signed for other" reject f.allowed alice@example.org fdl f.sig msg
forge ed25519 reserved=junk; case_ "reserved field not empty (not signed, ignored)" accept f.allowed alice@example.org fdl f.sig msg
# Fields as OpenSSH reads them: cstrings with one trailing NUL, type-name aliases, and
# integers with superfluous zeros; the public key file (the line) stays canonical.
for field in ns hash key-type sig-type; do
  forge ed25519 "nul=$field"; case_ "one NUL after the $field" accept f.allowed alice@example.org fdl f.sig msg
  forge ed25519 "nuls=$field"; case_ "two NULs after the $field" reject f.allowed alice@example.org fdl f.sig msg
done
forge rsa:1024 nul=sig-type; case_ "one NUL after the RSA signature's algorithm" accept f.allowed alice@example.org fdl f.sig msg
for alias in ED25519 ed25519 Ed25519 ssh-ed25519-cert-v01@openssh.com ED25519-SK ECDSA nonsense; do
  forge ed25519 "key-type=$alias"
  case "$alias" in
    ED25519 | ed25519 | Ed25519) case_ "ed25519 key typed '$alias'" accept f.allowed alice@example.org fdl f.sig msg ;;
    *) case_ "ed25519 key typed '$alias'" reject f.allowed alice@example.org fdl f.sig msg ;;
  esac
done
for alias in RSA rsa rsa-sha2-256 rsa-sha2-512 DSA ssh-ed25519; do
  forge rsa:1024 "key-type=$alias"
  case "$alias" in
    RSA | rsa | rsa-sha2-256 | rsa-sha2-512) case_ "rsa key typed '$alias'" accept f.allowed alice@example.org fdl f.sig msg ;;
    *) case_ "rsa key typed '$alias'" reject f.allowed alice@example.org fdl f.sig msg ;;
  esac
done
for alias in ED25519-SK ed25519-sk ssh-ed25519; do
  forge sk-ed25519 "key-type=$alias"
  if [ "$alias" = ssh-ed25519 ]; then case_ "sk-ed25519 key typed '$alias'" reject f.allowed alice@example.org fdl f.sig msg
  else case_ "sk-ed25519 key typed '$alias'" accept f.allowed alice@example.org fdl f.sig msg; fi
done
forge sk-ecdsa key-type=webauthn-sk-ecdsa-sha2-nistp256@openssh.com
case_ "sk-ecdsa key typed with the webauthn name" accept f.allowed alice@example.org fdl f.sig msg
forge sk-ecdsa key-type=ECDSA-SK; case_ "sk-ecdsa key typed 'ECDSA-SK'" reject f.allowed alice@example.org fdl f.sig msg
forge sk-ecdsa nul=key-type; case_ "one NUL after the sk-ecdsa key's type" accept f.allowed alice@example.org fdl f.sig msg
forge rsa:1024 rsa-zeros; case_ "RSA key with a leading zero more in e and n" accept f.allowed alice@example.org fdl f.sig msg
forge rsa:1024 rsa-short; case_ "RSA signature one byte shorter than the modulus" accept f.allowed alice@example.org fdl f.sig msg
# On a line: the type word takes implementation names only, the blob inside any alias.
forge ed25519; echo "alice@example.org ED25519 $(cut -d' ' -f2 f.pub)" >f-alias.allowed
case_ "the line's type word 'ED25519'" reject f-alias.allowed alice@example.org fdl f.sig msg
echo "alice@example.org ssh-rsa $(cut -d' ' -f2 f.pub)" >f-wrong.allowed
case_ "the line's ed25519 key typed 'ssh-rsa'" reject f-wrong.allowed alice@example.org fdl f.sig msg
blob_typed() { # NAME BASE64: the blob with its type string replaced
  python3 -c 'import base64,struct,sys; b=base64.b64decode(sys.argv[2]); n=struct.unpack(">I",b[:4])[0]; t=sys.argv[1].encode().replace(b"\\0",b"\0"); print(base64.b64encode(struct.pack(">I",len(t))+t+b[4+n:]).decode())' "$1" "$2"
}
for alias in ED25519 'ssh-ed25519\0' ed25519-sk; do
  echo "alice@example.org ssh-ed25519 $(blob_typed "$alias" "$(cut -d' ' -f2 f.pub)")" >f-blob.allowed
  if [ "$alias" = ed25519-sk ]; then case_ "the line's blob typed '$alias'" reject f-blob.allowed alice@example.org fdl f.sig msg
  else case_ "the line's blob typed '$alias'" accept f-blob.allowed alice@example.org fdl f.sig msg; fi
done
forge rsa:1024; echo "alice@example.org rsa-sha2-512 $(cut -d' ' -f2 f.pub)" >f-rsa512.allowed
case_ "the line's RSA key typed 'rsa-sha2-512'" accept f-rsa512.allowed alice@example.org fdl f.sig msg
echo "alice@example.org RSA $(cut -d' ' -f2 f.pub)" >f-rsa-short.allowed
case_ "the line's RSA key typed 'RSA'" reject f-rsa-short.allowed alice@example.org fdl f.sig msg

# 8. Certificates signed by a CA listed as cert-authority.
ssh-keygen -q -t ed25519 -N "" -f ca
ssh-keygen -q -t ed25519 -N "" -f ca2
echo "*@example.org cert-authority $(cut -d' ' -f1,2 ca.pub)" >ca.allowed
echo "*@example.org cert-authority $(cut -d' ' -f1,2 ca2.pub)" >ca2.allowed
echo "*@example.org $(cut -d' ' -f1,2 ca.pub)" >ca-plain.allowed
echo "alice@example.org cert-authority namespaces=\"file\" $(cut -d' ' -f1,2 ca.pub)" >ca-ns.allowed
certsign() { # KEYNAME OUT [ssh-keygen -s options…]: certify key-KEYNAME, sign msg with the certificate
  local k=$1 out=$2
  shift 2
  rm -f "key-$k-cert.pub"
  ssh-keygen -q -s ca -I "cert-$k" "$@" "key-$k.pub" 2>/dev/null
  ssh-keygen -Y sign -q -f "key-$k-cert.pub" -n fdl <msg >"$out"
}
for k in ed25519 ecdsa256 rsa3072; do
  certsign "$k" "cert-$k.sig" -n alice@example.org,carol@example.org
  case_ "$k certificate, CA trusted" accept ca.allowed alice@example.org fdl "cert-$k.sig" msg
  case_ "$k certificate, second principal" accept ca.allowed carol@example.org fdl "cert-$k.sig" msg
  case_ "$k certificate, principal not in it" reject ca.allowed bob@example.org fdl "cert-$k.sig" msg
  case_ "$k certificate, another CA trusted" reject ca2.allowed alice@example.org fdl "cert-$k.sig" msg
  case_ "$k certificate, CA listed without cert-authority" reject ca-plain.allowed alice@example.org fdl "cert-$k.sig" msg
  case_ "$k certificate, tampered message" reject ca.allowed alice@example.org fdl "cert-$k.sig" tampered
done
case_ "certificate, the certified key listed plainly" reject all alice@example.org fdl cert-ed25519.sig msg
case_ "certificate, CA line's namespaces exclude fdl" reject ca-ns.allowed alice@example.org fdl cert-ed25519.sig msg
certsign ed25519 cert-old.sig -n alice@example.org -V 20200101:20200102
case_ "expired certificate" reject ca.allowed alice@example.org fdl cert-old.sig msg
case_ "certificate within its validity at the verify time" accept ca.allowed alice@example.org fdl cert-old.sig msg 20200101120000
certsign ed25519 cert-host.sig -h -n alice@example.org
case_ "host certificate" reject ca.allowed alice@example.org fdl cert-host.sig msg
certsign ed25519 cert-noprincipals.sig
case_ "certificate without principals" reject ca.allowed alice@example.org fdl cert-noprincipals.sig msg

# Knowingly stricter than OpenSSH.
forge ed25519 version=0; case_ "SSHSIG version 0" accept f.allowed alice@example.org fdl f.sig msg
certsign ed25519 cert-forced.sig -n alice@example.org -O force-command=/bin/true
stricter_ "certificate with a critical option" ca.allowed alice@example.org fdl cert-forced.sig msg
# DSA (ssh-dss): 1024-bit keys and SHA-1, deprecated by OpenSSH; this build verifies none.
ssh-keygen -q -t dsa -N "" -f key-dsa 2>/dev/null
ssh-keygen -Y sign -q -f key-dsa -n fdl <msg >sig-dsa
line alice@example.org dsa >dsa.allowed
stricter_ "DSA key" dsa.allowed alice@example.org fdl sig-dsa msg
# An Ed25519 signature whose S is not reduced (S + L): OpenSSH checks only S < 2^253.
forge ed25519 s-plus-l; stricter_ "Ed25519 signature with an unreduced S" f.allowed alice@example.org fdl f.sig msg
# A certificate signed by an RSA CA with SHA-1 (ssh-rsa).
ssh-keygen -q -t rsa -b 2048 -N "" -f ca-rsa
echo "*@example.org cert-authority $(cut -d' ' -f1,2 ca-rsa.pub)" >ca-rsa.allowed
rm -f key-ed25519-cert.pub
ssh-keygen -q -s ca-rsa -t ssh-rsa -I sha1-cert -n alice@example.org key-ed25519.pub
ssh-keygen -Y sign -q -f key-ed25519-cert.pub -n fdl <msg >cert-sha1.sig
stricter_ "certificate signed by an RSA CA with SHA-1" ca-rsa.allowed alice@example.org fdl cert-sha1.sig msg
rm -f key-ed25519-cert.pub
ssh-keygen -q -s ca-rsa -t rsa-sha2-512 -I sha512-cert -n alice@example.org key-ed25519.pub
ssh-keygen -Y sign -q -f key-ed25519-cert.pub -n fdl <msg >cert-rsa512.sig
case_ "certificate signed by an RSA CA with rsa-sha2-512" accept ca-rsa.allowed alice@example.org fdl cert-rsa512.sig msg
# A certificate listed as a plain key: OpenSSH matches it with no look at its validity.
rm -f key-ed25519-cert.pub
ssh-keygen -q -s ca -I plain-listed -n alice@example.org -V 20200101:20200102 key-ed25519.pub
ssh-keygen -Y sign -q -f key-ed25519-cert.pub -n fdl <msg >cert-expired-plain.sig
echo "alice@example.org $(cut -d' ' -f1,2 key-ed25519-cert.pub)" >cert-as-key.allowed
stricter_ "an expired certificate listed as a plain key" cert-as-key.allowed alice@example.org fdl cert-expired-plain.sig msg

# 8b. Security keys (FIDO/U2F), signed in software by fdl-test-sshsig: an authenticator's
# signing key is an ordinary Ed25519 or P-256 key (PROTOCOL.u2f). OpenSSH 9.2 verifies them
# and enforces no flag: fdl-mirror requires the user-presence flag unless the line says
# no-touch-required, and the user-verification flag when it says verify-required.
extended=0
# extended_ NAME EXPECT WITH_OPTIONS PLAIN SIG MSG: lines with options OpenSSH 9.2 does not
# know (ssh-keygen skips such a line). fdl-mirror must give EXPECT, and may accept only
# what ssh-keygen accepts with the same line without those options.
extended_() {
  local name=$1 expect=$2 k m
  k=$(keygen_verdict "$4" alice@example.org fdl "$5" "$6")
  m=$(mirror_verdict "$3" alice@example.org fdl "$5" "$6")
  if [ "$m" = "$expect" ] && { [ "$m" = reject ] || [ "$k" = accept ]; }; then
    extended=$((extended + 1)); pass
  else
    fail "$name: fdl-mirror $m (expected $expect), ssh-keygen on the plain line $k ($(head -c 200 "$work/why"))"
  fi
}
ssh-keygen -q -t ed25519 -N "" -f sk-ca
for kt in sk-ed25519 sk-ecdsa; do
  for fl in 0 1 4 5 255; do
    "$FDL_SSHSIG" "$kt" msg fdl "sig-$kt-$fl" "$kt.pub" "flags=$fl" "key-file=$kt.pem" "counter=$((fl * 1000 + 7))"
    echo "alice@example.org $(cat "$kt.pub")" >"$kt.allowed"
    echo "alice@example.org no-touch-required $(cat "$kt.pub")" >"$kt-nt.allowed"
    echo "alice@example.org verify-required $(cat "$kt.pub")" >"$kt-vr.allowed"
    echo "alice@example.org no-touch-required,verify-required $(cat "$kt.pub")" >"$kt-both.allowed"
    up=$(( fl & 1 )) uv=$(( (fl >> 2) & 1 ))
    if [ "$up" = 1 ]; then case_ "$kt flags=$fl" accept "$kt.allowed" alice@example.org fdl "sig-$kt-$fl" msg
    else stricter_ "$kt flags=$fl, no user presence" "$kt.allowed" alice@example.org fdl "sig-$kt-$fl" msg; fi
    extended_ "$kt flags=$fl no-touch-required" accept "$kt-nt.allowed" "$kt.allowed" "sig-$kt-$fl" msg
    extended_ "$kt flags=$fl verify-required" "$([ "$up$uv" = 11 ] && echo accept || echo reject)" \
      "$kt-vr.allowed" "$kt.allowed" "sig-$kt-$fl" msg
    extended_ "$kt flags=$fl no-touch-required,verify-required" "$([ "$uv" = 1 ] && echo accept || echo reject)" \
      "$kt-both.allowed" "$kt.allowed" "sig-$kt-$fl" msg
    case_ "$kt flags=$fl tampered message" reject "$kt.allowed" alice@example.org fdl "sig-$kt-$fl" tampered
  done
  "$FDL_SSHSIG" "$kt" msg fdl "sig-$kt-app" "$kt.pub" "key-file=$kt.pem" signed-app=ssh:elsewhere
  case_ "$kt signed for another application" reject "$kt.allowed" alice@example.org fdl "sig-$kt-app" msg
  "$FDL_SSHSIG" "$kt" msg fdl "sig-$kt-ns" "$kt.pub" "key-file=$kt.pem" signed-namespace=git
  case_ "$kt signed for another namespace" reject "$kt.allowed" alice@example.org fdl "sig-$kt-ns" msg
  "$FDL_SSHSIG" "$kt" msg fdl "sig-$kt-256" "$kt.pub" "key-file=$kt.pem" hash=sha256
  case_ "$kt sha256" accept "$kt.allowed" alice@example.org fdl "sig-$kt-256" msg
  "$FDL_SSHSIG" "$kt" msg fdl "sig-$kt-app2" "$kt-app2.pub" "key-file=$kt.pem" app=ssh:fdl-release
  echo "alice@example.org $(cat "$kt-app2.pub")" >"$kt-app2.allowed"
  case_ "$kt another application, listed as such" accept "$kt-app2.allowed" alice@example.org fdl "sig-$kt-app2" msg
  case_ "$kt another application than the line's key" reject "$kt.allowed" alice@example.org fdl "sig-$kt-app2" msg
  # Certificates of security keys, from ssh-keygen -s: plain, and with verify-required.
  ssh-keygen -q -s sk-ca -I "$kt-id" -n alice@example.org -V 20200101:20991231 "$kt.pub"
  cp "$kt-cert.pub" "$kt-plain-cert.pub"
  ssh-keygen -q -s sk-ca -I "$kt-id" -n alice@example.org -V 20200101:20991231 -O verify-required "$kt.pub"
  cp "$kt-cert.pub" "$kt-vr-cert.pub"
  echo "*@example.org cert-authority $(cut -d' ' -f1,2 sk-ca.pub)" >sk-ca.allowed
  for fl in 1 5 0; do
    "$FDL_SSHSIG" "$kt" msg fdl "sig-$kt-cert-$fl" x.pub "key-file=$kt.pem" "flags=$fl" "cert=$kt-plain-cert.pub"
    "$FDL_SSHSIG" "$kt" msg fdl "sig-$kt-vrcert-$fl" x.pub "key-file=$kt.pem" "flags=$fl" "cert=$kt-vr-cert.pub"
    if [ "$fl" = 0 ]; then
      stricter_ "$kt certificate flags=0, no user presence" sk-ca.allowed alice@example.org fdl "sig-$kt-cert-$fl" msg
    else
      case_ "$kt certificate flags=$fl" accept sk-ca.allowed alice@example.org fdl "sig-$kt-cert-$fl" msg
    fi
    if [ "$fl" = 5 ]; then
      case_ "$kt certificate verify-required, flags=$fl" accept sk-ca.allowed alice@example.org fdl "sig-$kt-vrcert-$fl" msg
    else
      stricter_ "$kt certificate verify-required, flags=$fl" sk-ca.allowed alice@example.org fdl "sig-$kt-vrcert-$fl" msg
    fi
  done
  case_ "$kt certificate, wrong principal" reject sk-ca.allowed bob@example.com fdl "sig-$kt-cert-1" msg
done

# 8c. Integers and lengths inside the signature, as OpenSSH 9.2 reads them: ssh-keygen's own
# signatures (and fdl-test-sshsig's security-key ones) with the inner signature re-encoded.
# resig OP IN OUT: IN's inner signature rewritten by OP, armored again into OUT; exit 3 when
# IN does not suit OP. OPs: {r,s}-negative (a mpint that starts with a zero byte, for its
# top bit, loses it: read unsigned it is still the right value), {r,s}-empty, {r,s}-zero
# and {r,s}-zeros (one and two superfluous leading zero bytes), {r,s}-pad:N (zero bytes in
# front up to N bytes), short (the last byte dropped), long (a zero byte appended),
# prefix-zero (a zero byte in front: the same integer, one byte longer).
resig() {
  python3 - "$@" <<'PY'
import base64, struct, sys
op, src, dst = sys.argv[1:]
body = "".join(l for l in open(src).read().splitlines() if l and not l.startswith("-----"))
blob = base64.b64decode(body)
def take(b, i):
    n = struct.unpack(">I", b[i:i + 4])[0]
    return b[i + 4:i + 4 + n], i + 4 + n
def put(x):
    return struct.pack(">I", len(x)) + x
assert blob[:6] == b"SSHSIG", "no SSHSIG preamble"
fields, i = [], 10  # after the preamble and the version: key, namespace, reserved, hash, signature
for _ in range(5):
    f, i = take(blob, i)
    fields.append(f)
assert i == len(blob), "bytes after the signature"
algorithm, j = take(fields[4], 0)
inner, j = take(fields[4], j)
rest = fields[4][j:]  # a security key's flags and counter
if op[:2] in ("r-", "s-"):
    r, k = take(inner, 0)
    s, k = take(inner, k)
    assert k == len(inner), "not two mpints"
    ints = {"r": r, "s": s}
    which, how = op.split("-", 1)
    m = ints[which]
    if how == "negative":
        if not (len(m) > 1 and m[0] == 0 and m[1] & 0x80):
            sys.exit(3)
        m = m[1:]
    elif how == "empty":
        m = b""
    elif how == "zero":
        m = b"\0" + m
    elif how == "zeros":
        m = b"\0\0" + m
    elif how.startswith("pad:"):
        m = b"\0" * (int(how[4:]) - len(m)) + m
    else:
        sys.exit(f"resig: unknown OP {op}")
    ints[which] = m
    inner = put(ints["r"]) + put(ints["s"])
elif op == "short":
    inner = inner[:-1]
elif op == "long":
    inner = inner + b"\0"
elif op == "prefix-zero":
    inner = b"\0" + inner
else:
    sys.exit(f"resig: unknown OP {op}")
fields[4] = put(algorithm) + put(inner) + rest
text = base64.b64encode(blob[:10] + b"".join(put(f) for f in fields)).decode()
with open(dst, "w") as out:
    out.write("-----BEGIN SSH SIGNATURE-----\n")
    for n in range(0, len(text), 70):
        out.write(text[n:n + 70] + "\n")
    out.write("-----END SSH SIGNATURE-----\n")
PY
}
# resigned_case NAME EXPECT ALLOWED OP SIGN...: runs SIGN (which writes fresh.sig) until OP
# applies to its signature (a fresh ECDSA signature has an r or s with a zero byte in front
# about one time in two to four), then the case on the result.
resigned_case() {
  local name=$1 expect=$2 allowed=$3 op=$4 try rc
  shift 4
  for try in $(seq 100); do
    "$@"
    rc=0
    resig "$op" fresh.sig resigned.sig || rc=$?
    if [ "$rc" = 0 ]; then case_ "$name" "$expect" "$allowed" alice@example.org fdl resigned.sig msg; return; fi
    [ "$rc" = 3 ] || { fail "$name: resig $op failed ($rc)"; return; }
  done
  fail "$name: no signature in 100 that suits $op"
}
keygen_sign() { ssh-keygen -Y sign -q -f "key-$1" -n fdl <msg >fresh.sig; }
sk_sign() { "$FDL_SSHSIG" sk-ecdsa msg fdl fresh.sig x.pub key-file=sk-ecdsa.pem; }
for k in ecdsa256 ecdsa384 ecdsa521; do
  for int in r s; do
    resig "$int-zero" "sig-$k" int.sig; case_ "$k $int with a superfluous leading zero" accept all alice@example.org fdl int.sig msg
    resig "$int-zeros" "sig256-$k" int.sig; case_ "$k $int with two superfluous leading zeros (sha256)" accept all alice@example.org fdl int.sig msg
    resig "$int-empty" "sig-$k" int.sig; case_ "$k $int an empty mpint" reject all alice@example.org fdl int.sig msg
    resig "$int-pad:2049" "sig-$k" int.sig; case_ "$k $int zero-padded to 2049 bytes" accept all alice@example.org fdl int.sig msg
    resig "$int-pad:2050" "sig-$k" int.sig; case_ "$k $int zero-padded to 2050 bytes" reject all alice@example.org fdl int.sig msg
    resig "$int-zero" "sig-$k" int.sig; case_ "$k $int with a leading zero, tampered message" reject all alice@example.org fdl int.sig tampered
    resigned_case "$k $int negative (its zero byte dropped)" reject all "$int-negative" keygen_sign "$k"
  done
done
for int in r s; do
  resig "$int-zero" sig-sk-ecdsa-1 int.sig; case_ "sk-ecdsa $int with a superfluous leading zero" accept sk-ecdsa.allowed alice@example.org fdl int.sig msg
  resig "$int-empty" sig-sk-ecdsa-1 int.sig; case_ "sk-ecdsa $int an empty mpint" reject sk-ecdsa.allowed alice@example.org fdl int.sig msg
  resig "$int-pad:2050" sig-sk-ecdsa-1 int.sig; case_ "sk-ecdsa $int zero-padded to 2050 bytes" reject sk-ecdsa.allowed alice@example.org fdl int.sig msg
  resigned_case "sk-ecdsa $int negative (its zero byte dropped)" reject sk-ecdsa.allowed "$int-negative" sk_sign
done
for s in sig-ed25519 sig256-ed25519; do
  resig short "$s" len.sig; case_ "ed25519 signature of 63 bytes ($s)" reject all alice@example.org fdl len.sig msg
  resig long "$s" len.sig; case_ "ed25519 signature of 65 bytes ($s)" reject all alice@example.org fdl len.sig msg
  resig prefix-zero "$s" len.sig; case_ "ed25519 signature of 65 bytes, a zero in front ($s)" reject all alice@example.org fdl len.sig msg
done
resig short sig-sk-ed25519-1 len.sig; case_ "sk-ed25519 signature of 63 bytes" reject sk-ed25519.allowed alice@example.org fdl len.sig msg
resig long sig-sk-ed25519-1 len.sig; case_ "sk-ed25519 signature of 65 bytes" reject sk-ed25519.allowed alice@example.org fdl len.sig msg
for s in sig-rsa3072 sig256-rsa3072; do
  resig prefix-zero "$s" len.sig; case_ "RSA signature one byte longer than the modulus, a zero in front ($s)" reject all alice@example.org fdl len.sig msg
  resig long "$s" len.sig; case_ "RSA signature one byte longer than the modulus, a zero behind ($s)" reject all alice@example.org fdl len.sig msg
  resig short "$s" len.sig; case_ "RSA signature with its last byte dropped ($s)" reject all alice@example.org fdl len.sig msg
done

# 9. find-principals against ssh-keygen -Y find-principals: the same principals, in order.
find_case() { # NAME ALLOWED SIG [TIME]
  local name=$1 extra_k=() extra_m=()
  [ -n "${4:-}" ] && extra_k=(-Overify-time="$4") && extra_m=(--verify-time "$4")
  local k m
  k=$(ssh-keygen -Y find-principals -f "$2" -s "$3" "${extra_k[@]}" 2>/dev/null; echo "exit $?")
  m=$("$FDL_MIRROR" find-principals -f "$2" -s "$3" "${extra_m[@]}" 2>/dev/null; echo "exit $?")
  k=${k/exit 255/exit 1}
  if [ "$k" = "$m" ]; then same=$((same + 1)); pass; else fail "find-principals $name: ssh-keygen '$k', fdl-mirror '$m'"; fi
}
{ line alice@example.org ed25519; line "bob@example.org,carol@example.org" ed25519; line dave@example.org rsa3072; } >multi
find_case "two lines hold the key" multi sig-ed25519
find_case "one line holds the key" multi sig-rsa3072
find_case "no line holds the key" multi sig-ecdsa256
echo "alice@example.org valid-before=\"20200101\" $(cut -d' ' -f1,2 key-ed25519.pub)" >old
find_case "outside the validity window" old sig-ed25519
find_case "inside the validity window" old sig-ed25519 20190101
find_case "a certificate" ca.allowed cert-ed25519.sig
find_case "an expired certificate" ca.allowed cert-old.sig
find_case "an expired certificate at a time it was valid" ca.allowed cert-old.sig 20200101120000
find_case "a host certificate" ca.allowed cert-host.sig
find_case "a certificate without principals" ca.allowed cert-noprincipals.sig
# The principals field as written: an empty item ends the list, '!' is not special.
{ line "alice@example.org,,bob@example.org" ed25519; } >empty-item
find_case "an empty item in the principals" empty-item sig-ed25519
{ line ",alice@example.org" ed25519; } >empty-first
find_case "the principals start with an empty item" empty-first sig-ed25519
{ line '!bob@example.org,*' ed25519; } >negated
find_case "a negated principal on a key line" negated sig-ed25519
# Certificate lines: each pattern alone, in the line's order; duplicates are kept.
certsign ed25519 cert-three.sig -n alice@example.org,bob@example.org,carol@example.org
echo "carol@example.org,*@example.org cert-authority $(cut -d' ' -f1,2 ca.pub)" >ca-order.allowed
find_case "certificate principals in the line's pattern order" ca-order.allowed cert-three.sig
echo "!bob@example.org,* cert-authority $(cut -d' ' -f1,2 ca.pub)" >ca-negated.allowed
find_case "a negated pattern on a cert-authority line" ca-negated.allowed cert-three.sig
echo "dave@example.org cert-authority $(cut -d' ' -f1,2 ca.pub)" >ca-nomatch.allowed
{ cat ca-nomatch.allowed; cat ca.allowed; } >ca-second.allowed
find_case "the first CA line matches no principal, the second does" ca-second.allowed cert-three.sig
find_case "no CA line matches a principal" ca-nomatch.allowed cert-three.sig
# Long patterns (section 2b): a plain line's principals are printed as written; a certificate's
# are matched one pattern at a time with match_pattern, which has no length limit.
line "alice@example.org,$x1023" ed25519 >long-plain
find_case "a plain line with a 1023-byte principal" long-plain sig-ed25519
line "$x1023,alice@example.org" ed25519 >long-plain-first
find_case "a plain line whose first principal has 1023 bytes" long-plain-first sig-ed25519
certsign ed25519 cert-long.sig -n "alice@example.org,$x1023"
echo "alice@example.org,$x1023 cert-authority $(cut -d' ' -f1,2 ca.pub)" >ca-long.allowed
find_case "a certificate, a CA line with a 1023-byte pattern" ca-long.allowed cert-long.sig
echo "$x1022,$x1023 cert-authority $(cut -d' ' -f1,2 ca.pub)" >ca-long2.allowed
find_case "a certificate, a CA line with a 1022- and a 1023-byte pattern" ca-long2.allowed cert-long.sig
# The same lines to verify: there match_pattern_list reads the whole list, limit included.
case_ "certificate, CA line 'alice@example.org,<1023 x>'" reject ca-long.allowed alice@example.org fdl cert-long.sig msg
case_ "certificate, CA line 'alice@example.org,<1023 x>', principal <1023 x>" reject ca-long.allowed "$x1023" fdl cert-long.sig msg
echo "alice@example.org,$x1022 cert-authority $(cut -d' ' -f1,2 ca.pub)" >ca-long3.allowed
case_ "certificate, CA line 'alice@example.org,<1022 x>'" accept ca-long3.allowed alice@example.org fdl cert-long.sig msg
find_case "a certificate, a CA line 'alice@example.org,<1022 x>'" ca-long3.allowed cert-long.sig
# Lines whose window excludes now are passed over for the next.
{ echo "old@example.org valid-before=\"20200101\" $(cut -d' ' -f1,2 key-ed25519.pub)"; line new@example.org ed25519; } >window-then-plain
find_case "an expired line then a current one" window-then-plain sig-ed25519
# namespaces= is not looked at (no -n).
echo "alice@example.org namespaces=\"file\" $(cut -d' ' -f1,2 key-ed25519.pub)" >ns-line
find_case "a line whose namespaces exclude the signature's" ns-line sig-ed25519
# The signature itself is not verified: a damaged signature still names its principals.
dearmored() { sed '1d;$d' "$1" | base64 -d; }
armor() { { echo "-----BEGIN SSH SIGNATURE-----"; base64 -w 70; echo "-----END SSH SIGNATURE-----"; }; }
dearmored sig-ed25519 | python3 -c 'import sys; b=bytearray(sys.stdin.buffer.read()); b[-5]^=1; sys.stdout.buffer.write(b)' | armor >sig-damaged
find_case "a damaged signature" multi sig-damaged
find_case "a security key" "sk-ed25519.allowed" sig-sk-ed25519-1

echo "$same cases with the same verdict, $stricter where fdl-mirror is stricter, $extended with options only fdl-mirror knows"
total=$((same + stricter + extended))
[ "$total" -ge 250 ] || fail "fewer than 250 differential cases ($total)"
finish
