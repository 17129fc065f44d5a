#include "verify/ssh_cert.hpp"

#include "verify/errors.hpp"
#include "verify/ssh_wire.hpp"

#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <memory>

namespace mirror::verify {

namespace {

error malformed(std::string const& why) {
    return make_error(verify_errc::malformed_signature, "certificate: " + why);
}

std::string wire_string(std::string_view s) {
    std::uint32_t n = static_cast<std::uint32_t>(s.size());
    return std::string{static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                       static_cast<char>(n)} +
           std::string(s);
}

std::optional<std::uint64_t> u64(wire_reader& in) {
    auto high = in.u32();
    auto low = in.u32();
    if (!high || !low)
        return std::nullopt;
    return static_cast<std::uint64_t>(*high) << 32 | *low;
}

using pkey_ptr = std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)>;

/// An OpenSSL key from an SSH public key blob, or null.
pkey_ptr to_openssl(ssh_public_key const& key) {
    pkey_ptr none(nullptr, EVP_PKEY_free);
    wire_reader in(key.blob);
    in.string(); // the type
    if (key.type == "ssh-ed25519") {
        auto pk = in.string();
        return pkey_ptr(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                                    reinterpret_cast<unsigned char const*>(pk->data()), pk->size()),
                        EVP_PKEY_free);
    }
    std::unique_ptr<OSSL_PARAM_BLD, void (*)(OSSL_PARAM_BLD*)> build(OSSL_PARAM_BLD_new(), OSSL_PARAM_BLD_free);
    char const* algorithm = nullptr;
    std::unique_ptr<BIGNUM, void (*)(BIGNUM*)> e(nullptr, BN_free), n(nullptr, BN_free);
    std::string point;
    if (key.type == "ssh-rsa") {
        auto e_bytes = in.string();
        auto n_bytes = in.string();
        e.reset(BN_bin2bn(reinterpret_cast<unsigned char const*>(e_bytes->data()), static_cast<int>(e_bytes->size()), nullptr));
        n.reset(BN_bin2bn(reinterpret_cast<unsigned char const*>(n_bytes->data()), static_cast<int>(n_bytes->size()), nullptr));
        OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, n.get());
        OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, e.get());
        algorithm = "RSA";
    } else {
        auto curve = in.string();
        point = std::string(*in.string());
        char const* group = *curve == "nistp256" ? "P-256" : *curve == "nistp384" ? "P-384" : "P-521";
        OSSL_PARAM_BLD_push_utf8_string(build.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, 0);
        OSSL_PARAM_BLD_push_octet_string(build.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size());
        algorithm = "EC";
    }
    std::unique_ptr<OSSL_PARAM, void (*)(OSSL_PARAM*)> params(OSSL_PARAM_BLD_to_param(build.get()), OSSL_PARAM_free);
    std::unique_ptr<EVP_PKEY_CTX, void (*)(EVP_PKEY_CTX*)> ctx(EVP_PKEY_CTX_new_from_name(nullptr, algorithm, nullptr),
                                                              EVP_PKEY_CTX_free);
    EVP_PKEY* made = nullptr;
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
        EVP_PKEY_fromdata(ctx.get(), &made, EVP_PKEY_PUBLIC_KEY, params.get()) != 1)
        return none;
    return pkey_ptr(made, EVP_PKEY_free);
}

/// An ECDSA signature (mpint r, mpint s) as the DER OpenSSL verifies.
std::optional<std::string> ecdsa_der(std::string_view signature) {
    wire_reader in(signature);
    auto r = in.string();
    auto s = in.string();
    if (!r || !s || !in.empty())
        return std::nullopt;
    ECDSA_SIG* sig = ECDSA_SIG_new();
    BIGNUM* br = BN_bin2bn(reinterpret_cast<unsigned char const*>(r->data()), static_cast<int>(r->size()), nullptr);
    BIGNUM* bs = BN_bin2bn(reinterpret_cast<unsigned char const*>(s->data()), static_cast<int>(s->size()), nullptr);
    ECDSA_SIG_set0(sig, br, bs);
    unsigned char* der = nullptr;
    int length = i2d_ECDSA_SIG(sig, &der);
    ECDSA_SIG_free(sig);
    if (length <= 0)
        return std::nullopt;
    std::string out(reinterpret_cast<char*>(der), static_cast<std::size_t>(length));
    OPENSSL_free(der);
    return out;
}

} // namespace

result<void> verify_raw_signature(ssh_public_key const& key, std::string_view signature_blob, std::string_view data) {
    wire_reader in(signature_blob);
    auto algorithm = in.string();
    auto bytes = in.string();
    if (!algorithm || !bytes || !in.empty())
        return malformed("signature blob is truncated or has trailing bytes");
    EVP_MD const* md = nullptr;
    std::string signature(*bytes);
    if (key.type == "ssh-ed25519" && *algorithm == "ssh-ed25519" && bytes->size() == 64) {
        md = nullptr;
    } else if (key.type == "ssh-rsa" && (*algorithm == "rsa-sha2-256" || *algorithm == "rsa-sha2-512")) {
        md = *algorithm == "rsa-sha2-256" ? EVP_sha256() : EVP_sha512();
    } else if (key.type.starts_with("ecdsa-sha2-") && *algorithm == key.type) {
        md = key.type.ends_with("256") ? EVP_sha256() : key.type.ends_with("384") ? EVP_sha384() : EVP_sha512();
        auto der = ecdsa_der(*bytes);
        if (!der)
            return malformed("ECDSA signature is not two integers");
        signature = std::move(*der);
    } else {
        return make_error(verify_errc::unsupported_algorithm, "certificate: signature algorithm '" +
                                                                  std::string(algorithm->substr(0, 40)) +
                                                                  "' is not accepted for a " + key.type + " key");
    }
    auto pkey = to_openssl(key);
    if (!pkey)
        return malformed("the signing key cannot be loaded");
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    int verified = 0;
    if (ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, pkey.get()) == 1)
        verified = EVP_DigestVerify(ctx.get(), reinterpret_cast<unsigned char const*>(signature.data()),
                                    signature.size(), reinterpret_cast<unsigned char const*>(data.data()), data.size());
    if (verified != 1)
        return make_error(verify_errc::bad_signature, "certificate: the CA's signature does not verify");
    return {};
}

result<ssh_certificate> parse_certificate(std::string_view blob) {
    wire_reader in(blob);
    auto type = in.string();
    auto nonce = in.string();
    if (!type || !nonce)
        return malformed("truncated");
    std::string plain_type;
    if (*type == "ssh-ed25519-cert-v01@openssh.com")
        plain_type = "ssh-ed25519";
    else if (*type == "ssh-rsa-cert-v01@openssh.com")
        plain_type = "ssh-rsa";
    else if (type->starts_with("ecdsa-sha2-nistp") && type->ends_with("-cert-v01@openssh.com"))
        plain_type = std::string(type->substr(0, type->size() - std::string_view("-cert-v01@openssh.com").size()));
    else
        return make_error(verify_errc::unsupported_key_type,
                          "certificate: type '" + std::string(type->substr(0, 60)) + "' is not verified by this build");
    // The certified key's fields, rebuilt as a plain key blob.
    std::string plain = wire_string(plain_type);
    int fields = plain_type == "ssh-ed25519" ? 1 : 2;
    for (int i = 0; i < fields; ++i) {
        auto field = in.string();
        if (!field)
            return malformed("truncated key");
        plain += wire_string(*field);
    }
    ssh_certificate cert;
    auto key = parse_public_key_blob(plain);
    if (!key)
        return key.error();
    cert.key = std::move(*key);
    auto serial = u64(in);
    auto cert_type = in.u32();
    auto key_id = in.string();
    auto principals = in.string();
    auto after = u64(in);
    auto before = u64(in);
    auto critical = in.string();
    auto extensions = in.string();
    auto reserved = in.string();
    auto signed_end = blob.size();
    auto ca = in.string();
    if (!serial || !cert_type || !key_id || !principals || !after || !before || !critical || !extensions ||
        !reserved || !ca)
        return malformed("truncated");
    signed_end = static_cast<std::size_t>(ca->data() + ca->size() - blob.data());
    auto signature = in.string();
    if (!signature || !in.empty())
        return malformed("truncated signature or trailing bytes");
    cert.type = *cert_type;
    cert.key_id = std::string(*key_id);
    wire_reader names(*principals);
    while (!names.empty()) {
        auto name = names.string();
        if (!name)
            return malformed("principals list is malformed");
        cert.principals.emplace_back(*name);
    }
    cert.valid_after = *after;
    cert.valid_before = *before;
    wire_reader options(*critical);
    while (!options.empty()) {
        auto name = options.string();
        auto data = options.string();
        if (!name || !data)
            return malformed("critical options are malformed");
        cert.critical_options.emplace_back(*name);
    }
    auto ca_key = parse_public_key_blob(*ca);
    if (!ca_key)
        return with_context(ca_key.error(), "certificate's CA");
    cert.ca = std::move(*ca_key);
    cert.signed_part = std::string(blob.substr(0, signed_end));
    cert.signature = std::string(*signature);
    return cert;
}

result<void> check_certificate_signature(ssh_certificate const& cert) {
    return verify_raw_signature(cert.ca, cert.signature, cert.signed_part);
}

result<void> check_certificate_authority(ssh_certificate const& cert, std::string_view principal, std::int64_t now) {
    if (cert.type != 1)
        return make_error(verify_errc::principal_not_allowed, "certificate: not a user certificate");
    auto when = static_cast<std::uint64_t>(now < 0 ? 0 : now);
    if (when < cert.valid_after || when >= cert.valid_before)
        return make_error(verify_errc::outside_validity, "certificate '" + cert.key_id + "': outside its validity");
    if (!cert.critical_options.empty())
        return make_error(verify_errc::certificate_unsupported,
                          "certificate '" + cert.key_id + "': critical option '" + cert.critical_options.front() +
                              "' is not supported");
    if (cert.principals.empty())
        return make_error(verify_errc::principal_not_allowed, "certificate '" + cert.key_id + "': names no principals");
    for (auto const& name : cert.principals)
        if (name == principal)
            return {};
    return make_error(verify_errc::principal_not_allowed,
                      "certificate '" + cert.key_id + "': does not name principal '" + std::string(principal) + "'");
}

} // namespace mirror::verify
