// fdl-test-sshsig: a small SSHSIG signer for tests, which can make the signatures that
// ssh-keygen will not: weak RSA keys, SHA-1 RSA signatures, other versions, trailing bytes,
// unknown hash names, a filled reserved field. Keys are made fresh with OpenSSL each run.
//
//   fdl-test-sshsig KEY MESSAGE_FILE NAMESPACE OUT_SIGNATURE OUT_PUBLIC_KEY [TWEAK…]
//     KEY: ed25519 | rsa:BITS | sk-ed25519 | sk-ecdsa (security keys, signed in software:
//          an authenticator's signing key is an ordinary Ed25519 or P-256 key, PROTOCOL.u2f)
//     TWEAK: version=N | trailing | rsa-alg=NAME | hash=NAME | reserved=TEXT |
//            signed-namespace=NS (sign for NS, label the blob with NAMESPACE) |
//            key-file=PATH (keep the private key there: read it when it exists, else write it) |
//            security keys: flags=N (default 1, user present) | counter=N (default 42) |
//            app=TEXT (default ssh:) | signed-app=TEXT (the application signed, default app) |
//            cert=PATH (an OpenSSH certificate of the key, from ssh-keygen -s: its blob is
//            the signature's public key) |
//            OpenSSH's reading of the fields, in the signature only (the public key file
//            stays canonical): nul=FIELD (one NUL after it), nuls=FIELD (two NULs) with
//            FIELD ns, hash, key-type or sig-type | key-type=NAME (the key blob's type name,
//            such as ED25519 or rsa-sha2-512) | rsa-zeros (the key's e and n with a
//            superfluous leading zero byte) | rsa-short (an RSA signature one byte shorter
//            than the modulus: keys are made until a signature starts with a zero byte) |
//            s-plus-l (an Ed25519 signature's S with the group order added: unreduced)

#include "verify/ssh_wire.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

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

/// A fresh key of `algorithm` ("ED25519", "EC" on P-256), or the one kept in `file`.
EVP_PKEY* key_of(char const* algorithm, std::string const& file) {
    if (!file.empty()) {
        if (FILE* in = std::fopen(file.c_str(), "r")) {
            EVP_PKEY* kept = PEM_read_PrivateKey(in, nullptr, nullptr, nullptr);
            std::fclose(in);
            check(kept != nullptr, "read key-file");
            return kept;
        }
    }
    EVP_PKEY* made = std::string_view(algorithm) == "EC" ? EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")
                                                         : EVP_PKEY_Q_keygen(nullptr, nullptr, algorithm);
    check(made != nullptr, "keygen");
    if (!file.empty()) {
        FILE* out = std::fopen(file.c_str(), "w");
        check(out != nullptr && PEM_write_PrivateKey(out, made, nullptr, nullptr, 0, nullptr, nullptr) == 1,
              "write key-file");
        std::fclose(out);
    }
    return made;
}

/// The uncompressed P-256 point of an EC key.
std::string ec_point(EVP_PKEY* key) {
    unsigned char point[65];
    std::size_t len = 0;
    check(EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point, &len) == 1 && len == 65,
          "ec point");
    return std::string(reinterpret_cast<char*>(point), len);
}

/// A DER ECDSA signature as SSH's (mpint r, mpint s).
std::string ssh_ecdsa(std::string const& der) {
    auto const* p = reinterpret_cast<unsigned char const*>(der.data());
    ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
    check(sig != nullptr, "ecdsa der");
    std::string out = mpint(ECDSA_SIG_get0_r(sig)) + mpint(ECDSA_SIG_get0_s(sig));
    ECDSA_SIG_free(sig);
    return out;
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
        std::string public_override; // the public key file's blob, when the signature's differs
        if (key_spec == "ed25519") {
            raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
            check(raw != nullptr, "keygen");
            unsigned char pk[32];
            std::size_t len = sizeof pk;
            check(EVP_PKEY_get_raw_public_key(raw, pk, &len) == 1, "public key");
            type = "ssh-ed25519";
            key_blob = str(type) + str(std::string(reinterpret_cast<char*>(pk), len));
            std::string signature = sign(raw, nullptr, to_sign);
            if (tweaks.contains("s-plus-l")) { // S + L: the same signature to ref10, unreduced
                static constexpr unsigned char order[32] = {
                    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};
                unsigned carry = 0;
                for (int i = 0; i < 32; ++i) { // little-endian S in bytes 32..63
                    carry += static_cast<unsigned char>(signature[32 + i]) + order[i];
                    signature[32 + i] = static_cast<char>(carry & 0xff);
                    carry >>= 8;
                }
                check((static_cast<unsigned char>(signature[63]) & 0xe0) == 0, "S + L is not below 2^253");
            }
            signature_blob = str(type) + str(signature);
        } else if (key_spec.starts_with("rsa:")) {
            std::size_t bits = std::stoul(key_spec.substr(4));
            std::string alg = tweaks.contains("rsa-alg") ? tweaks["rsa-alg"] : "rsa-sha2-512";
            EVP_MD const* md = alg == "ssh-rsa" ? EVP_sha1() : alg == "rsa-sha2-256" ? EVP_sha256() : EVP_sha512();
            std::string signature;
            for (int attempt = 0;; ++attempt) { // rsa-short: 1 key in 256 signs with a leading zero
                check(attempt < 10000, "no RSA signature with a leading zero byte");
                EVP_PKEY_free(raw);
                raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", bits);
                check(raw != nullptr, "keygen");
                signature = sign(raw, md, to_sign);
                if (!tweaks.contains("rsa-short"))
                    break;
                if (signature[0] == '\0') {
                    signature.erase(0, 1);
                    break;
                }
            }
            BIGNUM* n = nullptr;
            BIGNUM* e = nullptr;
            check(EVP_PKEY_get_bn_param(raw, OSSL_PKEY_PARAM_RSA_N, &n) == 1 &&
                      EVP_PKEY_get_bn_param(raw, OSSL_PKEY_PARAM_RSA_E, &e) == 1, "rsa params");
            type = "ssh-rsa";
            key_blob = str(type) + mpint(e) + mpint(n);
            if (tweaks.contains("rsa-zeros")) { // a zero byte more in front of each integer
                auto padded = [](BIGNUM const* bn) {
                    std::string m = mpint(bn).substr(4);
                    return str(std::string(1, '\0') + m);
                };
                std::string zeros = str(type) + padded(e) + padded(n);
                public_override = key_blob;
                key_blob = zeros;
            }
            BN_free(n);
            BN_free(e);
            signature_blob = str(alg) + str(signature);
        } else if (key_spec == "sk-ed25519" || key_spec == "sk-ecdsa") {
            // PROTOCOL.u2f: the authenticator signs SHA256(application) || flags || counter
            // || SHA256(what SSHSIG signs), Ed25519 over it, or ECDSA P-256 with SHA-256.
            bool const ed = key_spec == "sk-ed25519";
            raw = key_of(ed ? "ED25519" : "EC", tweaks["key-file"]);
            std::string app = tweaks.contains("app") ? tweaks["app"] : "ssh:";
            std::string signed_app = tweaks.contains("signed-app") ? tweaks["signed-app"] : app;
            auto flags = static_cast<char>(tweaks.contains("flags") ? std::stoul(tweaks["flags"]) : 1);
            auto counter = static_cast<std::uint32_t>(tweaks.contains("counter") ? std::stoul(tweaks["counter"]) : 42);
            if (ed) {
                unsigned char pk[32];
                std::size_t len = sizeof pk;
                check(EVP_PKEY_get_raw_public_key(raw, pk, &len) == 1, "public key");
                type = "sk-ssh-ed25519@openssh.com";
                key_blob = str(type) + str(std::string(reinterpret_cast<char*>(pk), len)) + str(app);
            } else {
                type = "sk-ecdsa-sha2-nistp256@openssh.com";
                key_blob = str(type) + str("nistp256") + str(ec_point(raw)) + str(app);
            }
            std::string by_key = digest("sha256", signed_app) + flags + u32(counter) + digest("sha256", to_sign);
            std::string sig = ed ? sign(raw, nullptr, by_key) : ssh_ecdsa(sign(raw, EVP_sha256(), by_key));
            signature_blob = str(type) + str(sig) + flags + u32(counter);
        } else {
            throw std::runtime_error("unknown key " + key_spec);
        }
        std::string public_blob = public_override.empty() ? key_blob : public_override;
        // OpenSSH's reading of the fields: a type name of its choice, trailing NULs.
        auto with_nuls = [&](std::string const& field) {
            return std::string(tweaks["nul"] == field ? 1 : tweaks["nuls"] == field ? 2 : 0, '\0');
        };
        auto retyped = [&](std::string const& blob, std::string const& name) { // blob's first string renamed
            std::uint32_t old_len = (static_cast<unsigned char>(blob[0]) << 24) | (static_cast<unsigned char>(blob[1]) << 16) |
                                    (static_cast<unsigned char>(blob[2]) << 8) | static_cast<unsigned char>(blob[3]);
            return str(name) + blob.substr(4 + old_len);
        };
        if (tweaks.contains("key-type") || !with_nuls("key-type").empty())
            key_blob = retyped(key_blob, (tweaks.contains("key-type") ? tweaks["key-type"] : type) + with_nuls("key-type"));
        std::string sig_type_name = signature_blob.substr(4, (static_cast<unsigned char>(signature_blob[2]) << 8) |
                                                                 static_cast<unsigned char>(signature_blob[3]));
        signature_blob = retyped(signature_blob, sig_type_name + with_nuls("sig-type"));
        if (tweaks.contains("cert")) { // "TYPE BASE64 [COMMENT]" from ssh-keygen -s
            std::istringstream line(read(tweaks["cert"]));
            std::string cert_type, cert_base64;
            line >> cert_type >> cert_base64;
            auto decoded = mirror::verify::base64_decode(cert_base64);
            check(decoded.has_value(), "cert base64");
            key_blob = *decoded;
        }
        EVP_PKEY_free(raw);

        std::string blob = "SSHSIG" + u32(version) + str(key_blob) + str(ns + with_nuls("ns")) + str(reserved) +
                           str(hash + with_nuls("hash")) + str(signature_blob);
        if (tweaks.contains("trailing"))
            blob += '\0';
        std::string body = base64_encode(blob);
        std::string armored = "-----BEGIN SSH SIGNATURE-----\n";
        for (std::size_t i = 0; i < body.size(); i += 70)
            armored += body.substr(i, 70) + "\n";
        armored += "-----END SSH SIGNATURE-----\n";
        write(argv[4], armored);
        write(argv[5], type + " " + base64_encode(public_blob) + "\n");
        return 0;
    } catch (std::exception const& e) {
        std::fprintf(stderr, "fdl-test-sshsig: %s\n", e.what());
        return 1;
    }
}
