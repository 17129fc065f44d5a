#include "daemon/status/web_security.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <crypt.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>

namespace mirror::daemon {

namespace {

constexpr auto look_again_after = std::chrono::seconds(1);
constexpr std::size_t max_remembered = 1024; // answers kept; forgotten all at once when full

/// OpenSSL's last error, in words, then cleared.
std::string openssl_reason() {
    unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (code == 0)
        return "unknown reason";
    std::array<char, 256> text{};
    ERR_error_string_n(code, text.data(), text.size());
    return text.data();
}

int tls_version_code(config::tls_version version) {
    switch (version) {
    case config::tls_version::tls10: return TLS1_VERSION;
    case config::tls_version::tls11: return TLS1_1_VERSION;
    case config::tls_version::tls12: return TLS1_2_VERSION;
    case config::tls_version::tls13: return TLS1_3_VERSION;
    }
    return TLS1_2_VERSION;
}

std::optional<std::string> read_whole(std::filesystem::path const& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in.is_open())
        return std::nullopt;
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        return std::nullopt;
    return text;
}

/// Every certificate of a PEM text, in order.
std::vector<X509*> certificates_in(std::string const& pem) {
    std::vector<X509*> out;
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr))
        out.push_back(cert);
    ERR_clear_error(); // the end of the text reads as an error
    BIO_free(bio);
    return out;
}

void free_all(std::vector<X509*>& certs) {
    for (X509* cert : certs)
        X509_free(cert);
    certs.clear();
}

int accept_any_certificate(int, X509_STORE_CTX*) { return 1; }

/// The server's chain and key into `ctx`; "" when done, else why not.
std::string use_identity(SSL_CTX* ctx, std::string const& cert_pem, std::string const& key_pem,
                         std::string const& cert_where, std::string const& key_where) {
    auto chain = certificates_in(cert_pem);
    if (chain.empty())
        return cert_where + ": no PEM certificate in it";
    bool ok = SSL_CTX_use_certificate(ctx, chain.front()) == 1;
    for (std::size_t i = 1; ok && i < chain.size(); ++i)
        ok = SSL_CTX_add1_chain_cert(ctx, chain[i]) == 1;
    free_all(chain);
    if (!ok)
        return cert_where + ": " + openssl_reason();
    BIO* bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (key == nullptr) {
        ERR_clear_error();
        return key_where + ": no unencrypted PEM private key in it";
    }
    ok = SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
    EVP_PKEY_free(key);
    if (!ok)
        return key_where + ": " + openssl_reason() + " (is it the certificate's key?)";
    return {};
}

/// The roots client certificates must chain to, and the names a client is told to choose
/// its certificate by (Go's clients send none whose issuer is not among them).
std::string use_client_roots(SSL_CTX* ctx, std::string const& pem, std::string const& where) {
    auto roots = certificates_in(pem);
    if (roots.empty())
        return where + ": no PEM certificate in it";
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
    for (X509* root : roots) {
        X509_STORE_add_cert(store, root);
        sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(root)));
    }
    SSL_CTX_set_client_CA_list(ctx, names);
    free_all(roots);
    ERR_clear_error(); // a root given twice is "already in the store", not a problem
    return {};
}

void apply_client_auth(SSL_CTX* ctx, config::client_auth mode) {
    switch (mode) {
    case config::client_auth::none: SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr); break;
    case config::client_auth::request: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any_certificate); break;
    case config::client_auth::require_any:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_any_certificate);
        break;
    case config::client_auth::verify_if_given: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr); break;
    case config::client_auth::require_and_verify:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
        break;
    }
    // A client certificate must be one for client authentication, as Go's servers require.
    SSL_CTX_set_purpose(ctx, X509_PURPOSE_SSL_CLIENT);
    // Resumed sessions keep their verified client: OpenSSL needs a context name for that.
    static constexpr unsigned char context_name[] = "fdl-mirror";
    SSL_CTX_set_session_id_context(ctx, context_name, sizeof context_name - 1);
}

std::variant<std::shared_ptr<net::ssl::context>, std::vector<std::string>> make_tls(
    config::tls_server_settings const& tls) {
    std::vector<std::string> problems;
    auto text_of = [&](std::optional<std::filesystem::path> const& file, std::string const& inline_pem,
                       std::string const& key) -> std::pair<std::string, std::string> {
        if (!file)
            return {inline_pem, "tls_server_config: " + key};
        auto text = read_whole(*file);
        if (!text)
            problems.push_back("tls_server_config: " + key + "_file " + file->string() + ": cannot read it");
        return {text.value_or(""), "tls_server_config: " + key + "_file " + file->string()};
    };
    auto [cert_pem, cert_where] = text_of(tls.cert_file, tls.cert_pem, "cert");
    auto [key_pem, key_where] = text_of(tls.key_file, tls.key_pem, "key");
    std::pair<std::string, std::string> roots;
    if (tls.client_ca_file || !tls.client_ca_pem.empty())
        roots = text_of(tls.client_ca_file, tls.client_ca_pem, "client_ca");
    if (!problems.empty())
        return problems;
    auto context = std::make_shared<net::ssl::context>(net::ssl::context::tls_server);
    SSL_CTX* ctx = context->native_handle();
    SSL_CTX_set_min_proto_version(ctx, tls_version_code(tls.min_version));
    SSL_CTX_set_max_proto_version(ctx, tls_version_code(tls.max_version));
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                 (tls.prefer_server_cipher_suites ? SSL_OP_CIPHER_SERVER_PREFERENCE : 0));
    if (auto why = use_identity(ctx, cert_pem, key_pem, cert_where, key_where); !why.empty())
        problems.push_back(why);
    if (!roots.first.empty() || !roots.second.empty())
        if (auto why = use_client_roots(ctx, roots.first, roots.second); !why.empty())
            problems.push_back(why);
    apply_client_auth(ctx, tls.client_auth_type);
    if (!problems.empty())
        return problems;
    return context;
}

/// "user:password" of a Basic Authorization header; nullopt when it is not one.
std::optional<std::pair<std::string, std::string>> basic_credentials(std::string_view header) {
    constexpr std::string_view scheme = "basic ";
    if (header.size() <= scheme.size() || header.size() > 4096)
        return std::nullopt;
    for (std::size_t i = 0; i < scheme.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(header[i])) != scheme[i])
            return std::nullopt;
    std::string_view encoded = header.substr(scheme.size());
    while (!encoded.empty() && encoded.front() == ' ')
        encoded.remove_prefix(1);
    if (encoded.empty() || encoded.size() % 4 != 0)
        return std::nullopt;
    std::string decoded(encoded.size() / 4 * 3, '\0');
    int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                            reinterpret_cast<unsigned char const*>(encoded.data()), static_cast<int>(encoded.size()));
    if (n < 0)
        return std::nullopt;
    decoded.resize(static_cast<std::size_t>(n));
    for (std::size_t pad = encoded.size(); pad > 0 && encoded[pad - 1] == '='; --pad)
        decoded.pop_back(); // EVP_DecodeBlock counts the padding as bytes
    auto colon = decoded.find(':');
    if (colon == std::string::npos)
        return std::nullopt;
    return std::pair(decoded.substr(0, colon), decoded.substr(colon + 1));
}

/// Whether `password` hashes to `hash` (bcrypt, by libxcrypt), compared in constant time.
bool bcrypt_matches(std::string const& password, std::string const& hash) {
    auto data = std::make_unique<crypt_data>(); // 32 KiB: not on the stack
    char const* out = crypt_r(password.c_str(), hash.c_str(), data.get());
    if (out == nullptr || out[0] == '*' || std::strlen(out) != hash.size())
        return false;
    return CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
}

awaitable<bool> bcrypt_comparison(std::string password, std::string hash) {
    co_return bcrypt_matches(password, hash);
}

std::string digest_of(std::string const& user, std::string const& hash, std::string const& password) {
    std::string input = user + '\0' + hash + '\0' + password;
    std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
    unsigned size = 0;
    EVP_Digest(input.data(), input.size(), out.data(), &size, EVP_sha256(), nullptr);
    OPENSSL_cleanse(input.data(), input.size());
    return std::string(reinterpret_cast<char const*>(out.data()), size);
}

/// The hash an unknown user's password is compared with: the configured one of the highest
/// cost (a user's name never matches, so no password can let it in), so that an unknown
/// user costs what the costliest known one does.
std::string const& unknown_user_hash(config::web_config const& config) {
    auto costliest = config.users.begin();
    for (auto it = config.users.begin(); it != config.users.end(); ++it)
        if (it->second.substr(4, 2) > costliest->second.substr(4, 2))
            costliest = it;
    return costliest->second;
}

} // namespace

std::variant<std::shared_ptr<web_settings const>, std::vector<std::string>> load_web_settings(
    std::filesystem::path const& file) {
    auto loaded = config::load_web_config(file);
    if (!loaded) {
        std::vector<std::string> problems;
        for (auto const& problem : loaded.error())
            problems.push_back(problem.text());
        return problems;
    }
    auto settings = std::make_shared<web_settings>();
    settings->config = std::move(*loaded);
    if (settings->config.tls) {
        auto tls = make_tls(*settings->config.tls);
        if (auto* problems = std::get_if<std::vector<std::string>>(&tls)) {
            for (auto& problem : *problems)
                problem = file.string() + ": " + problem;
            return std::move(*problems);
        }
        settings->tls = std::get<0>(std::move(tls));
    }
    return std::shared_ptr<web_settings const>(std::move(settings));
}

bool peer_has_allowed_san(SSL const* connection, std::vector<std::string> const& allowed) {
    if (allowed.empty())
        return true;
    X509* cert = SSL_get0_peer_certificate(connection);
    if (cert == nullptr)
        return false;
    auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
    if (names == nullptr)
        return false;
    bool found = false;
    for (int i = 0; i < sk_GENERAL_NAME_num(names) && !found; ++i) {
        GENERAL_NAME const* name = sk_GENERAL_NAME_value(names, i);
        std::string value;
        if (name->type == GEN_DNS || name->type == GEN_EMAIL || name->type == GEN_URI) {
            ASN1_IA5STRING const* text = name->d.ia5;
            value.assign(reinterpret_cast<char const*>(ASN1_STRING_get0_data(text)),
                         static_cast<std::size_t>(ASN1_STRING_length(text)));
        } else if (name->type == GEN_IPADD) {
            auto const* bytes = ASN1_STRING_get0_data(name->d.ip);
            int const length = ASN1_STRING_length(name->d.ip);
            std::array<char, INET6_ADDRSTRLEN> text{};
            if ((length == 4 && inet_ntop(AF_INET, bytes, text.data(), text.size())) ||
                (length == 16 && inet_ntop(AF_INET6, bytes, text.data(), text.size())))
                value = text.data();
        }
        found = !value.empty() && std::find(allowed.begin(), allowed.end(), value) != allowed.end();
    }
    GENERAL_NAMES_free(names);
    return found;
}

web_security::web_security(std::optional<std::filesystem::path> file, std::shared_ptr<web_settings const> settings,
                           log_function log)
    : log_(std::move(log)) {
    use(std::move(file), std::move(settings));
}

web_security::~web_security() { hashing_.join(); }

void web_security::use(std::optional<std::filesystem::path> file, std::shared_ptr<web_settings const> settings) {
    file_ = std::move(file);
    settings_ = file_ ? std::move(settings) : nullptr;
    stamps_ = stamps();
    refused_stamps_.clear();
    remembered_.clear();
    looked_ = std::chrono::steady_clock::now();
}

std::vector<web_security::file_stamp> web_security::stamps() const {
    std::vector<file_stamp> out;
    if (!file_)
        return out;
    std::vector<std::filesystem::path> paths{*file_};
    if (settings_ && settings_->config.tls)
        for (auto const& path : {settings_->config.tls->cert_file, settings_->config.tls->key_file,
                                 settings_->config.tls->client_ca_file})
            if (path)
                paths.push_back(*path);
    for (auto const& path : paths) {
        std::error_code ec;
        file_stamp stamp{path, std::filesystem::last_write_time(path, ec), 0};
        if (!ec)
            stamp.size = std::filesystem::file_size(path, ec);
        out.push_back(std::move(stamp));
    }
    return out;
}

std::shared_ptr<web_settings const> web_security::current() {
    auto const now = std::chrono::steady_clock::now();
    if (!file_ || now - looked_ < look_again_after)
        return settings_;
    looked_ = now;
    auto seen = stamps();
    if (seen == stamps_ || seen == refused_stamps_)
        return settings_;
    auto loaded = load_web_settings(*file_);
    if (auto const* problems = std::get_if<std::vector<std::string>>(&loaded)) {
        refused_stamps_ = std::move(seen); // logged once per change
        for (auto const& problem : *problems)
            log_(true, "web configuration changed but does not load; the last good one stays in force: " + problem);
        return settings_;
    }
    settings_ = std::get<0>(std::move(loaded));
    stamps_ = stamps(); // the files the new settings name
    refused_stamps_.clear();
    remembered_.clear();
    log_(false, "web configuration reloaded from " + file_->string() +
                    (settings_->config.tls ? " (TLS" : " (plain HTTP") +
                    (settings_->config.users.empty() ? ")" : ", basic authentication)"));
    return settings_;
}

awaitable<auth_result> web_security::authorize(web_settings const& settings, std::string_view authorization) {
    if (settings.config.users.empty())
        co_return auth_result::allowed;
    auto credentials = basic_credentials(authorization);
    if (!credentials)
        co_return auth_result::refused;
    auto const& [user, password] = *credentials;
    auto const known = settings.config.users.find(user);
    std::string const hash = known == settings.config.users.end() ? unknown_user_hash(settings.config) : known->second;
    std::string const digest = digest_of(user, hash, password);
    if (remembered_.contains(digest))
        co_return auth_result::allowed;
    // A bounded queue: 150 wrong passwords at once once kept the hashing thread busy for
    // seconds while the real scraper waited behind them (issue 45).
    struct pending_slot { // given back however the wait ends (a connection cut mid-wait too)
        std::atomic<std::size_t>& count;
        ~pending_slot() { --count; }
    } slot{pending_};
    if (pending_.fetch_add(1) >= max_pending_comparisons)
        co_return auth_result::busy;
    // A named awaitable, not a lambda temporary: GCC 12 frees a temporary's captures
    // twice across co_await (docs/development.md).
    auto comparison = bcrypt_comparison(password, hash);
    bool const matches = co_await net::co_spawn(hashing_.get_executor(), std::move(comparison), net::use_awaitable);
    bool const allowed = matches && known != settings.config.users.end();
    if (allowed) {
        if (remembered_.size() >= max_remembered)
            remembered_.clear(); // only successful logins are here: its users' own
        remembered_.insert(digest);
    }
    co_return allowed ? auth_result::allowed : auth_result::refused;
}

} // namespace mirror::daemon
