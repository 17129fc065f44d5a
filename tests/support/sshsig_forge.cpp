// fdl-test-sshsig: a small SSHSIG signer for tests, which can make the signatures that
// ssh-keygen will not: weak RSA keys, SHA-1 RSA signatures, other versions, trailing bytes,
// unknown hash names, a filled reserved field. Keys are made fresh with OpenSSL each run.
//
//   fdl-test-sshsig KEY MESSAGE_FILE NAMESPACE OUT_SIGNATURE OUT_PUBLIC_KEY [TWEAK…]
//     KEY: ed25519 | rsa:BITS
//     TWEAK: version=N | trailing | rsa-alg=NAME | hash=NAME | reserved=TEXT |
//            signed-namespace=NS (sign for NS, label the blob with NAMESPACE)

#include "verify/ssh_wire.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using mirror::verify::base64_encode;

std::string u32(std::uint32_t v) {
    return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}
std::string str(std::string_view s) { return u32(static_cast<std::uint32_t>(s.size())) + std::string(s); }

std::string mpint(BIGNUM const* bn) {
    std::string bytes(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
    BN_bn2bin(bn, reinterpret_cast<unsigned char*>(bytes.data()));
    if (!bytes.empty() && (static_cast<unsigned char>(bytes[0]) & 0x80))
        bytes.insert(bytes.begin(), '\0');
    return str(bytes);
}

void check(bool ok, char const* what) {
    if (!ok)
        throw std::runtime_error(what);
}

std::string digest(std::string_view name, std::string_view data) {
    EVP_MD const* md = name == "sha256" ? EVP_sha256() : name == "sha1" ? EVP_sha1() : EVP_sha512();
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    check(EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) == 1, "digest");
    return std::string(reinterpret_cast<char*>(out), len);
}

std::string sign(EVP_PKEY* key, EVP_MD const* md, std::string_view data) {
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    check(EVP_DigestSignInit(ctx.get(), nullptr, md, nullptr, key) == 1, "sign init");
    std::size_t len = 0;
    check(EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<unsigned char const*>(data.data()), data.size()) == 1, "sign size");
    std::string out(len, '\0');
    check(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len,
                         reinterpret_cast<unsigned char const*>(data.data()), data.size()) == 1, "sign");
    out.resize(len);
    return out;
}

std::string read(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write(std::string const& path, std::string const& bytes) {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
    check(static_cast<bool>(out), "write");
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 6) {
        std::fputs("usage: fdl-test-sshsig KEY MESSAGE_FILE NAMESPACE OUT_SIGNATURE OUT_PUBLIC_KEY [TWEAK...]\n", stderr);
        return 2;
    }
    try {
        std::string key_spec = argv[1];
        std::string message = read(argv[2]);
        std::string ns = argv[3];
        std::map<std::string, std::string> tweaks;
        for (int i = 6; i < argc; ++i) {
            std::string t = argv[i];
            auto eq = t.find('=');
            tweaks[t.substr(0, eq)] = eq == std::string::npos ? "" : t.substr(eq + 1);
        }
        std::string hash = tweaks.contains("hash") ? tweaks["hash"] : "sha512";
        std::string signed_ns = tweaks.contains("signed-namespace") ? tweaks["signed-namespace"] : ns;
        std::string reserved = tweaks.contains("reserved") ? tweaks["reserved"] : "";
        std::uint32_t version = tweaks.contains("version") ? static_cast<std::uint32_t>(std::stoul(tweaks["version"])) : 1;

        // What SSHSIG signs: the preamble, namespace, an empty reserved field, the hash
        // algorithm and the message's hash (PROTOCOL.sshsig).
        std::string to_sign = "SSHSIG" + str(signed_ns) + str("") + str(hash) + str(digest(hash, message));

        EVP_PKEY* raw = nullptr;
        std::string key_blob, signature_blob, type;
        if (key_spec == "ed25519") {
            raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
            check(raw != nullptr, "keygen");
            unsigned char pk[32];
            std::size_t len = sizeof pk;
            check(EVP_PKEY_get_raw_public_key(raw, pk, &len) == 1, "public key");
            type = "ssh-ed25519";
            key_blob = str(type) + str(std::string(reinterpret_cast<char*>(pk), len));
            signature_blob = str(type) + str(sign(raw, nullptr, to_sign));
        } else if (key_spec.starts_with("rsa:")) {
            std::size_t bits = std::stoul(key_spec.substr(4));
            raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", bits);
            check(raw != nullptr, "keygen");
            BIGNUM* n = nullptr;
            BIGNUM* e = nullptr;
            check(EVP_PKEY_get_bn_param(raw, OSSL_PKEY_PARAM_RSA_N, &n) == 1 &&
                      EVP_PKEY_get_bn_param(raw, OSSL_PKEY_PARAM_RSA_E, &e) == 1, "rsa params");
            type = "ssh-rsa";
            key_blob = str(type) + mpint(e) + mpint(n);
            BN_free(n);
            BN_free(e);
            std::string alg = tweaks.contains("rsa-alg") ? tweaks["rsa-alg"] : "rsa-sha2-512";
            EVP_MD const* md = alg == "ssh-rsa" ? EVP_sha1() : alg == "rsa-sha2-256" ? EVP_sha256() : EVP_sha512();
            signature_blob = str(alg) + str(sign(raw, md, to_sign));
        } else {
            throw std::runtime_error("unknown key " + key_spec);
        }
        EVP_PKEY_free(raw);

        std::string blob = "SSHSIG" + u32(version) + str(key_blob) + str(ns) + str(reserved) + str(hash) + str(signature_blob);
        if (tweaks.contains("trailing"))
            blob += '\0';
        std::string body = base64_encode(blob);
        std::string armored = "-----BEGIN SSH SIGNATURE-----\n";
        for (std::size_t i = 0; i < body.size(); i += 70)
            armored += body.substr(i, 70) + "\n";
        armored += "-----END SSH SIGNATURE-----\n";
        write(argv[4], armored);
        write(argv[5], type + " " + base64_encode(key_blob) + "\n");
        return 0;
    } catch (std::exception const& e) {
        std::fprintf(stderr, "fdl-test-sshsig: %s\n", e.what());
        return 1;
    }
}
