#include "verify/openssl_key.hpp"

#include "verify/ssh_wire.hpp"

#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/param_build.h>

namespace mirror::verify {

pkey_ptr to_openssl(ssh_public_key const& key) {
    pkey_ptr none(nullptr, EVP_PKEY_free);
    wire_reader in(key.blob);
    in.string(); // the type
    // The security-key kinds hold the same fields first; their application is not OpenSSL's.
    if (key.type == "ssh-ed25519" || key.type == "sk-ssh-ed25519@openssh.com") {
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


std::optional<std::string> ecdsa_integers_problem(std::string_view signature) {
    wire_reader in(signature);
    auto r = in.string();
    auto s = in.string();
    if (!r || !s || !in.empty())
        return "not two integers";
    for (auto [name, m] : {std::pair{"r", *r}, std::pair{"s", *s}}) {
        if (m.empty())
            return std::string(name) + " is empty";
        if ((static_cast<unsigned char>(m[0]) & 0x80) != 0)
            return std::string(name) + " is negative (its first byte has the top bit set)";
        if (m.size() > 2049 || (m.size() == 2049 && m[0] != 0))
            return std::string(name) + " is longer than 16384 bits";
    }
    return std::nullopt;
}

bool openssl_verifies(EVP_PKEY* key, EVP_MD const* md, std::string_view signature, std::string_view data) {
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    return ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key) == 1 &&
           EVP_DigestVerify(ctx.get(), reinterpret_cast<unsigned char const*>(signature.data()), signature.size(),
                            reinterpret_cast<unsigned char const*>(data.data()), data.size()) == 1;
}

} // namespace mirror::verify
